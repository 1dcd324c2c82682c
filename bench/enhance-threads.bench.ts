// The speech-enhancement chain (LARK_V2) on a 44.1 kHz stereo file in the engine's worker pool with 1
// and with 2 threads (a file's channels are lent to an idle thread), beside RNNoise alone on the same
// channels, one after the other, in the same run.
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRnnoise, RNNOISE_FRAME } from '../src/enhance/rnnoise';
import { WorkerPool } from '../src/engine/worker-pool';
import { speechLike, writeWavFile } from '../test/fixtures/audio';
import type { BenchReport } from './run';

const SECONDS = 120;
const RATE = 44_100;
const ROUNDS = 3;

async function seconds(task: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await task();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** RNNoise alone: both channels' worth of 48 kHz frames through one denoiser per channel, on this thread. */
async function rnnoiseAlone(channels: number): Promise<number> {
  const rnnoise = await loadRnnoise();
  const input = new Float32Array(RNNOISE_FRAME).map((_, i) => 0.1 * Math.sin(i / 3));
  const output = new Float32Array(RNNOISE_FRAME);
  return seconds(async () => {
    for (let c = 0; c < channels; c++) {
      const denoiser = rnnoise.createDenoiser();
      for (let frame = 0; frame < SECONDS * 100; frame++) denoiser.process(input, output);
      denoiser.destroy();
    }
  });
}

async function chainIn(pool: WorkerPool, input: string, dir: string): Promise<{ time: number; threads: number }> {
  let threads = 0;
  const job = { inputPath: input, outputPath: join(dir, `out-${Math.random()}.wav`), input: { kind: 'audio', ext: 'wav', contentType: 'audio/wav' }, settings: { loudness_target: -16, true_peak: -1, enhancement_model: 'LARK_V2', enhancement_level: 100 } } as const;
  const time = await seconds(async () => (threads = (await pool.run(job)).params.threads as number));
  return { time, threads };
}

export async function run(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-threads-'));
  const module = join(__dirname, 'chain-only-processor.js');
  const pools = [new WorkerPool(1, module, { ffmpegPath: 'ffmpeg' }), new WorkerPool(2, module, { ffmpegPath: 'ffmpeg' })];
  try {
    const input = join(dir, 'stereo.wav');
    await writeWavFile(input, { sampleRate: RATE, channels: 2, bits: 16 }, SECONDS, speechLike(RATE, 2, 21, -26));
    for (const pool of pools) await chainIn(pool, input, dir); // warm-up: threads started, WebAssembly compiled
    // Interleaved rounds, each figure the median of its rounds, so a passing load elsewhere weighs on all alike.
    const rounds: Array<{ alone: number; one: { time: number; threads: number }; two: { time: number; threads: number } }> = [];
    for (let round = 0; round < ROUNDS; round++) rounds.push({ alone: await rnnoiseAlone(2), one: await chainIn(pools[0], input, dir), two: await chainIn(pools[1], input, dir) });
    const median = <T>(pick: (r: (typeof rounds)[number]) => T, time: (value: T) => number) => rounds.map(pick).sort((a, b) => time(a) - time(b))[Math.floor(ROUNDS / 2)];
    const alone = median((r) => r.alone, (t) => t);
    const one = median((r) => r.one, (r) => r.time);
    const two = median((r) => r.two, (r) => r.time);
    const realtime = (time: number) => `${(SECONDS / time).toFixed(1)}x realtime`;
    return {
      title: `Speech enhancement in the worker pool: ${SECONDS} s of 44.1 kHz stereo, LARK_V2, 1 and 2 threads`,
      table: [
        ['measure', 'value', 'reference: RNNoise alone, both channels on one thread', 'ratio', 'goal'],
        [`whole chain, pool of 1 (channels on ${one.threads} thread)`, realtime(one.time), realtime(alone), (alone / one.time).toFixed(2), '>= 0.7'],
        [`whole chain, pool of 2 (channels on ${two.threads} threads)`, realtime(two.time), realtime(alone), (alone / two.time).toFixed(2), ''],
        ['2 threads against 1', `${(one.time / two.time).toFixed(2)}x faster`, '', '', ''],
      ],
      notes: [
        'The chain: hum search, 80 Hz high-pass, hum notches, resampling to 48 kHz and back (Speex, quality 3, SIMD), RNNoise, the mix, the leveler; WAV read and float WAV written. RNNoise alone: the same number of 480-sample frames through one denoiser per channel, nothing else.',
        `Each pool ran the file once to warm up (threads started, WebAssembly compiled); then ${ROUNDS} rounds of the three, interleaved, and the median of each; ${cpus().length} cores.`,
      ],
    };
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
    await rm(dir, { recursive: true, force: true });
  }
}
