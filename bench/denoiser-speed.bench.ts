// Our own share of the LARK_V2 chain's time, on one thread, 48 kHz mono: the chain (DeepFilterNet3) beside
// DeepFilterNet3's network alone on the same frames (the blocks and warm-up the chain runs). Interleaved
// rounds, medians. The chains against each other and against RNNoise alone are in enhance-speed.bench.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enhanceWavFile } from '../src/enhance/chain';
import { HOP, STFT_DELAY } from '../src/enhance/dfn-frames';
import { DF_BINS, ERB_BANDS } from '../src/enhance/dfn-features';
import { DfnNetwork } from '../src/enhance/dfn-model';
import { DEFAULT_CHUNK } from '../src/enhance/dfn-stream';
import { speechLike, writeWavFile } from '../test/fixtures/audio';
import type { BenchReport } from './run';

const SECONDS = 60;
const ROUNDS = 3;
const RATE = 48_000;

async function seconds(task: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await task();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** The network alone over the runs the chain makes for SECONDS of audio (features of zeros: the cost is the same). */
async function networkAlone(): Promise<void> {
  const frames = Math.ceil((SECONDS * RATE + STFT_DELAY) / HOP) + 2;
  const network = await DfnNetwork.create();
  const erb = new Float32Array(DEFAULT_CHUNK * ERB_BANDS);
  const spec = new Float32Array(DEFAULT_CHUNK * 2 * DF_BINS);
  for (let done = 0; done < frames; done += DEFAULT_CHUNK)
    await network.run(erb, spec, Math.min(DEFAULT_CHUNK, frames - done));
}

export async function run(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-denoiser-speed-'));
  try {
    const input = join(dir, 'speech.wav');
    await writeWavFile(input, { sampleRate: RATE, channels: 1, bits: 16 }, SECONDS, speechLike(RATE, 1, 21, -26));
    const lark = () => enhanceWavFile(input, join(dir, 'LARK_V2.wav'), { model: 'LARK_V2', level: 100 });
    await lark(); // warm-up: the network loaded, WebAssembly compiled
    const rounds = { network: [] as number[], lark: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      rounds.network.push(await seconds(networkAlone));
      rounds.lark.push(await seconds(lark));
    }
    const median = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];
    const realtime = (time: number) => `${(SECONDS / time).toFixed(1)}x realtime`;
    const [network, chain] = [median(rounds.network), median(rounds.lark)];
    return {
      title: "LARK_V2's own share of its time beside DeepFilterNet3's network, 48 kHz mono, one thread",
      table: [
        ['measure', 'value', 'reference', 'ratio', 'goal'],
        [
          'LARK_V2 chain (DeepFilterNet3)',
          realtime(chain),
          `DeepFilterNet3's network alone on the same frames: ${realtime(network)}`,
          (network / chain).toFixed(2),
          '>= 0.8',
        ],
      ],
      writtenAlone: true,
      notes: [
        `${SECONDS} s of speech-like signal; the network runs in chunks of ${DEFAULT_CHUNK} frames, as in the chain.`,
        'The chain includes reading and writing the files, the high-pass, hum search, the voice read from the denoised energy and the leveler.',
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
