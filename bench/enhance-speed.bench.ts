// Speed of the two chains in the engine's worker pool, on a 48 kHz mono and a 44.1 kHz stereo file, with
// 1 and with 2 threads (a file's channels are lent to an idle thread): FINCH (RNNoise) beside RNNoise alone
// on the same channels, LARK_V2 (DeepFilterNet3) beside FINCH, and ffmpeg's afftdn on the same file,
// interleaved in the same run. LARK_V2's own share beside DeepFilterNet3's network alone is measured in
// denoiser-speed.bench.ts, on one thread without the pool.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { EnhancementModel } from '../src/enhance/chain-types';
import { loadRnnoise, RNNOISE_FRAME, RNNOISE_RATE } from '../src/enhance/rnnoise';
import { WorkerPool } from '../src/engine/jobs/worker-pool';
import { speechLike, writeWavFile } from '../test/fixtures/audio';
import type { BenchReport } from './run';

const exec = promisify(execFile);
const SECONDS = 60;
const ROUNDS = 3;
/** The speech-like signal's seed and level (dBFS). */
const SEED = 21;
const LEVEL_DB = -26;
const MODELS: EnhancementModel[] = ['FINCH', 'LARK_V2'];
const FILES = [
  { name: '48 kHz mono', sampleRate: 48_000, channels: 1 },
  { name: '44.1 kHz stereo', sampleRate: 44_100, channels: 2 },
];

interface Timed {
  time: number;
  threads: number;
}

interface Round {
  alone: number;
  finch: [Timed, Timed];
  lark: [Timed, Timed];
  afftdn: number;
}

async function seconds(task: () => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await task();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/**
 * RNNoise alone on this thread: the file's signal made again at 48 kHz (the rate RNNoise runs at, as the
 * chain's resampler gives it), each channel through a denoiser of its own, frame by frame. The same
 * signal matters: RNNoise skips most of its work on near-silent frames, as a speech file's pauses are.
 */
async function rnnoiseAlone(channels: Float32Array[]): Promise<number> {
  const rnnoise = await loadRnnoise();
  const output = new Float32Array(RNNOISE_FRAME);
  return seconds(() => {
    for (const samples of channels) {
      const denoiser = rnnoise.createDenoiser();
      for (let at = 0; at + RNNOISE_FRAME <= samples.length; at += RNNOISE_FRAME)
        denoiser.process(samples.subarray(at, at + RNNOISE_FRAME), output);
      denoiser.destroy();
    }
  });
}

async function chainIn(pool: WorkerPool, model: EnhancementModel, input: string, dir: string): Promise<Timed> {
  let threads = 0;
  const job = {
    inputPath: input,
    outputPath: join(dir, 'chain-out.wav'),
    input: { kind: 'audio', ext: 'wav', contentType: 'audio/wav' },
    settings: { loudness_target: -16, true_peak: -1, enhancement_model: model, enhancement_level: 100 },
  } as const;
  const time = await seconds(async () => (threads = (await pool.run(job)).params.threads as number));
  return { time, threads };
}

/** ffmpeg's own denoiser on the same file, float WAV out, process start included. */
const afftdn = (input: string, dir: string) =>
  seconds(() =>
    exec('ffmpeg', [
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-i',
      input,
      '-af',
      'afftdn',
      '-c:a',
      'pcm_f32le',
      join(dir, 'afftdn-out.wav'),
    ]),
  );

export async function run(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-enhance-speed-'));
  const module = join(__dirname, 'chain-only-processor.js');
  const pools = [
    new WorkerPool(1, module, { ffmpegPath: 'ffmpeg' }),
    new WorkerPool(2, module, { ffmpegPath: 'ffmpeg' }),
  ];
  const realtime = (time: number) => `${(SECONDS / time).toFixed(1)}x realtime`;
  const rows: string[][] = [['file, measure', 'value', 'reference', 'ratio', 'goal']];
  try {
    for (const file of FILES) {
      const input = join(dir, `${file.sampleRate}-${file.channels}.wav`);
      await writeWavFile(
        input,
        { sampleRate: file.sampleRate, channels: file.channels, bits: 16 },
        SECONDS,
        speechLike(file.sampleRate, file.channels, SEED, LEVEL_DB),
      );
      // Warm-up: threads started, WebAssembly compiled, the network loaded in each thread.
      const at48 = speechLike(RNNOISE_RATE, file.channels, SEED, LEVEL_DB)(SECONDS * RNNOISE_RATE);
      for (const pool of pools) for (const model of MODELS) await chainIn(pool, model, input, dir);
      await afftdn(input, dir);
      // Interleaved rounds, each figure the median of its rounds, so a passing load elsewhere weighs on all alike.
      const rounds: Round[] = [];
      const both = async (model: EnhancementModel): Promise<[Timed, Timed]> => [
        await chainIn(pools[0], model, input, dir),
        await chainIn(pools[1], model, input, dir),
      ];
      for (let round = 0; round < ROUNDS; round++) {
        rounds.push({
          alone: await rnnoiseAlone(at48),
          finch: await both('FINCH'),
          lark: await both('LARK_V2'),
          afftdn: await afftdn(input, dir),
        });
      }
      const median = <T>(pick: (r: Round) => T, time: (value: T) => number) =>
        rounds.map(pick).sort((a, b) => time(a) - time(b))[Math.floor(ROUNDS / 2)];
      const alone = median(
        (r) => r.alone,
        (t) => t,
      );
      const ffmpeg = median(
        (r) => r.afftdn,
        (t) => t,
      );
      const [finch1, finch2, lark1, lark2] = (
        [
          ['finch', 0],
          ['finch', 1],
          ['lark', 0],
          ['lark', 1],
        ] as const
      ).map(([model, pool]) =>
        median(
          (r) => r[model][pool],
          (t) => t.time,
        ),
      );
      const on = (timed: Timed, pool: number) =>
        `pool of ${pool} (on ${timed.threads} thread${timed.threads > 1 ? 's' : ''})`;
      rows.push(
        [
          `${file.name}: FINCH chain, ${on(finch1, 1)}`,
          realtime(finch1.time),
          `RNNoise alone on the same channels, one thread: ${realtime(alone)}`,
          (alone / finch1.time).toFixed(2),
          '>= 0.7',
        ],
        [
          `${file.name}: FINCH chain, ${on(finch2, 2)}`,
          realtime(finch2.time),
          `RNNoise alone: ${realtime(alone)}`,
          (alone / finch2.time).toFixed(2),
          '',
        ],
        [
          `${file.name}: LARK_V2 chain, ${on(lark1, 1)}`,
          realtime(lark1.time),
          `FINCH, pool of 1: ${realtime(finch1.time)}`,
          (finch1.time / lark1.time).toFixed(2),
          '',
        ],
        [
          `${file.name}: LARK_V2 chain, ${on(lark2, 2)}`,
          realtime(lark2.time),
          `FINCH, pool of 2: ${realtime(finch2.time)}`,
          (finch2.time / lark2.time).toFixed(2),
          '',
        ],
        [
          `${file.name}: FINCH chain, pool of 1, against ffmpeg afftdn on the same file`,
          realtime(finch1.time),
          `afftdn: ${realtime(ffmpeg)}`,
          (ffmpeg / finch1.time).toFixed(2),
          '',
        ],
      );
      // One channel runs on one thread: a second thread has nothing to take.
      if (lark2.threads > 1)
        rows.push([
          `${file.name}: 2 threads against 1`,
          `FINCH ${(finch1.time / finch2.time).toFixed(2)}x, LARK_V2 ${(lark1.time / lark2.time).toFixed(2)}x faster`,
          '',
          '',
          '',
        ]);
    }
    return {
      title: `Speech enhancement speed: ${SECONDS} s files through FINCH and LARK_V2 in the worker pool, 1 and 2 threads`,
      table: rows,
      writtenAlone: true,
      notes: [
        "FINCH: 80 Hz high-pass, resampling to 48 kHz and back where needed (Speex, quality 3, SIMD), RNNoise, the mix. LARK_V2: hum search, the pass that finds quiet files and twin channels, high-pass, hum subtraction, resampling, DeepFilterNet3, the leveler (its voice read from the denoised signal's energy). Both: 16-bit WAV read and float WAV written (the loudness stage is left out: its speed is in the loudness table). RNNoise alone: the same speech-like signal made at 48 kHz, in 480-sample frames through one denoiser per channel, nothing else (RNNoise does less on the pauses' near-silent frames, so a steady tone would not do).",
        "LARK_V2's own share of its time beside DeepFilterNet3's network alone is in the noise reduction speed table (one thread, no pool).",
        'afftdn: `ffmpeg -i in.wav -af afftdn -c:a pcm_f32le out.wav`, process start included: the nearest denoiser a user has without this package.',
        `Each pool and afftdn ran each file once to warm up (threads started, WebAssembly compiled); then ${ROUNDS} interleaved rounds and the median of each; ${cpus().length} cores.`,
      ],
    };
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
    await rm(dir, { recursive: true, force: true });
  }
}
