// Loudness analysis (integrated loudness + true peak) of the same 10-minute 48 kHz stereo 24-bit WAV
// by our code and by ffmpeg's ebur128 filter, in the same run; then full normalization, against
// ffmpeg's own loudnorm filter doing the same job (-16 LUFS, -1 dBTP) on the same file.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { measureWavFile } from '../src/audio/measure';
import { normalizeWavFile } from '../src/audio/normalize';
import { speechLike, writeWavFile } from '../test/fixtures/audio';
import type { BenchReport } from './run';

const exec = promisify(execFile);
const SECONDS = 600;
const RUNS = 3;

async function seconds(task: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await task();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** The median of RUNS timings (the file is read once before, so both tools find it in the page cache). */
async function median(task: () => Promise<unknown>, runs = RUNS): Promise<number> {
  await task();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await seconds(task));
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

const ffmpegAnalysis = (path: string) =>
  exec('ffmpeg', ['-nostdin', '-nostats', '-hide_banner', '-i', path, '-af', 'ebur128=peak=true', '-f', 'null', '-'], {
    maxBuffer: 64 << 20,
  });

export async function run(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-loudness-'));
  try {
    const speech = join(dir, 'speech.wav');
    await writeWavFile(speech, { sampleRate: 48_000, channels: 2, bits: 24 }, SECONDS, speechLike(48_000, 2, 11, -26));
    const noise = join(dir, 'noise.wav');
    await exec('ffmpeg', [
      '-nostdin',
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      `anoisesrc=c=pink:r=48000:a=0.25:d=${SECONDS}`,
      '-ac',
      '2',
      '-c:a',
      'pcm_s24le',
      noise,
    ]);

    const rows: string[][] = [['measure', 'ours', 'ffmpeg', 'ours / ffmpeg', 'goal']];
    const realtime = (time: number) => `${(SECONDS / time).toFixed(0)}x realtime`;
    for (const [name, path] of [
      ['analysis, speech-like programme', speech],
      ['analysis, full-band pink noise (worst case: no stretch is quiet enough to skip)', noise],
    ]) {
      const ours = await median(() => measureWavFile(path));
      const theirs = await median(() => ffmpegAnalysis(path));
      rows.push([
        name,
        realtime(ours),
        realtime(theirs),
        (theirs / ours).toFixed(2),
        name.includes('speech') ? '>= 1.0' : '',
      ]);
    }
    let passes = 0;
    const out = join(dir, 'out.wav');
    const normalize = await median(
      async () => (passes = (await normalizeWavFile(speech, out, { targetLufs: -16, ceilingDbtp: -1 })).passes),
      1,
    );
    const loudnorm = await median(
      () =>
        exec('ffmpeg', [
          '-nostdin',
          '-v',
          'error',
          '-y',
          '-i',
          speech,
          '-af',
          'loudnorm=I=-16:TP=-1',
          '-ar',
          '48000',
          '-c:a',
          'pcm_s24le',
          join(dir, 'loudnorm.wav'),
        ]),
      1,
    );
    rows.push([
      `normalization to -16 LUFS / -1 dBTP, speech-like (${passes} limiter pass${passes === 1 ? '' : 'es'} + 1 analysis)`,
      realtime(normalize),
      `${realtime(loudnorm)} (loudnorm)`,
      (loudnorm / normalize).toFixed(2),
      '',
    ]);
    return {
      title: `Loudness: ${SECONDS / 60}-minute 48 kHz stereo 24-bit WAV, our meter and normalizer against ffmpeg ${await ffmpegVersion()}`,
      table: rows,
      notes: [
        "Analysis = integrated loudness, loudness range and true peak (4x at 48 kHz, with the filter of ffmpeg's resampler). ffmpeg: `-af ebur128=peak=true -f null -` (it also upsamples every sample to 192 kHz for its true peak).",
        "Our true peak skips, exactly, every stretch whose largest sample cannot beat the peak found so far even at the interpolation filter's worst-case gain; speech is mostly such stretches, full-band noise is not.",
        "Normalization reads the file once to measure, then once per limiter pass (a pass is repeated, the gain corrected, until the output is within 0.05 LU of the target), writing and re-measuring the output in the same pass. loudnorm is ffmpeg's single-pass normalizer (dynamic mode), given as the nearest tool doing the same job.",
        `Median of ${RUNS} runs for analysis, one run for normalization, after one warm-up run each, both tools reading the same file from the page cache.`,
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function ffmpegVersion(): Promise<string> {
  const { stdout } = await exec('ffmpeg', ['-hide_banner', '-version']);
  return /ffmpeg version (\S+)/.exec(stdout)?.[1] ?? '';
}
