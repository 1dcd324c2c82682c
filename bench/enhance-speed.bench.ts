// Speed of the speech-enhancement chain (LARK_V2) on a 48 kHz mono and a 44.1 kHz stereo file, in the
// engine's worker pool with 1 and with 2 threads (a file's channels are lent to an idle thread), beside
// RNNoise alone on the same channels and ffmpeg's afftdn on the same file, interleaved in the same run.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadRnnoise, RNNOISE_FRAME } from '../src/enhance/rnnoise';
import { WorkerPool } from '../src/engine/jobs/worker-pool';
import { speechLike, writeWavFile } from '../test/fixtures/audio';
import type { BenchReport } from './run';

const exec = promisify(execFile);
const SECONDS = 120;
const ROUNDS = 3;
const FILES = [
  { name: '48 kHz mono', sampleRate: 48_000, channels: 1 },
  { name: '44.1 kHz stereo', sampleRate: 44_100, channels: 2 },
];

interface Round {
  alone: number;
  one: { time: number; threads: number };
  two: { time: number; threads: number };
  afftdn: number;
}

async function seconds(task: () => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await task();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** RNNoise alone: the file's channels' worth of 48 kHz frames through one denoiser per channel, on this thread. */
async function rnnoiseAlone(channels: number): Promise<number> {
  const rnnoise = await loadRnnoise();
  const input = new Float32Array(RNNOISE_FRAME).map((_, i) => 0.1 * Math.sin(i / 3));
  const output = new Float32Array(RNNOISE_FRAME);
  return seconds(() => {
    for (let c = 0; c < channels; c++) {
      const denoiser = rnnoise.createDenoiser();
      for (let frame = 0; frame < SECONDS * 100; frame++) denoiser.process(input, output);
      denoiser.destroy();
    }
  });
}

async function chainIn(pool: WorkerPool, input: string, dir: string): Promise<{ time: number; threads: number }> {
  let threads = 0;
  const job = {
    inputPath: input,
    outputPath: join(dir, 'chain-out.wav'),
    input: { kind: 'audio', ext: 'wav', contentType: 'audio/wav' },
    settings: { loudness_target: -16, true_peak: -1, enhancement_model: 'LARK_V2', enhancement_level: 100 },
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
        speechLike(file.sampleRate, file.channels, 21, -26),
      );
      for (const pool of pools) await chainIn(pool, input, dir); // warm-up: threads started, WebAssembly compiled
      await afftdn(input, dir);
      // Interleaved rounds, each figure the median of its rounds, so a passing load elsewhere weighs on all alike.
      const rounds: Round[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        rounds.push({
          alone: await rnnoiseAlone(file.channels),
          one: await chainIn(pools[0], input, dir),
          two: await chainIn(pools[1], input, dir),
          afftdn: await afftdn(input, dir),
        });
      }
      const median = <T>(pick: (r: Round) => T, time: (value: T) => number) =>
        rounds.map(pick).sort((a, b) => time(a) - time(b))[Math.floor(ROUNDS / 2)];
      const alone = median(
        (r) => r.alone,
        (t) => t,
      );
      const one = median(
        (r) => r.one,
        (r) => r.time,
      );
      const two = median(
        (r) => r.two,
        (r) => r.time,
      );
      const ffmpeg = median(
        (r) => r.afftdn,
        (t) => t,
      );
      rows.push(
        [
          `${file.name}: whole chain, pool of 1 (on ${one.threads} thread)`,
          realtime(one.time),
          `RNNoise alone on the same channels, one thread: ${realtime(alone)}`,
          (alone / one.time).toFixed(2),
          '>= 0.7',
        ],
        [
          `${file.name}: whole chain, pool of 2 (on ${two.threads} thread${two.threads > 1 ? 's' : ''})`,
          realtime(two.time),
          `RNNoise alone: ${realtime(alone)}`,
          (alone / two.time).toFixed(2),
          '',
        ],
        [
          `${file.name}: whole chain, pool of 1, against ffmpeg afftdn on the same file`,
          realtime(one.time),
          `afftdn: ${realtime(ffmpeg)}`,
          (ffmpeg / one.time).toFixed(2),
          '',
        ],
      );
      // One channel runs on one thread: a second thread has nothing to take.
      if (two.threads > 1)
        rows.push([`${file.name}: 2 threads against 1`, `${(one.time / two.time).toFixed(2)}x faster`, '', '', '']);
    }
    return {
      title: `Speech enhancement speed: ${SECONDS} s files through LARK_V2 in the worker pool, 1 and 2 threads`,
      table: rows,
      notes: [
        'The chain: hum search, 80 Hz high-pass, hum notches, resampling to 48 kHz and back where needed (Speex, quality 3, SIMD), RNNoise, the mix, the leveler; 16-bit WAV read and float WAV written (the loudness stage is left out: its speed is in the loudness table). RNNoise alone: the same number of 480-sample frames through one denoiser per channel, nothing else.',
        'afftdn: `ffmpeg -i in.wav -af afftdn -c:a pcm_f32le out.wav`, process start included: the nearest denoiser a user has without this package.',
        `Each pool and afftdn ran each file once to warm up (threads started, WebAssembly compiled); then ${ROUNDS} interleaved rounds and the median of each; ${cpus().length} cores.`,
      ],
    };
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
    await rm(dir, { recursive: true, force: true });
  }
}
