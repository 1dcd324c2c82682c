// A whole job as a user sends it (decode, measure, enhance, normalize, encode, check the encoded file) on
// 2 minutes of 44.1 kHz stereo speech, per format and model, in CPU time: the engine's processor and the
// ffmpeg and ffprobe it starts, against ffmpeg's own loudnorm plus the same encode on the same file, in
// the same run. The speeds the node dialogs and the README state are these.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { SettingsModel } from '../src/contract/fields';
import { processMedia } from '../src/engine/processors/enhance-processor';
import type { MediaType } from '../src/engine/storage/media-type';
import { speechLike, writeWavFile } from '../test/fixtures/audio';
import { cpuSeconds, type CpuSeconds } from './job-cpu';
import type { BenchReport } from './run';

const exec = promisify(execFile);
const SECONDS = 120;
const RATE = 44_100;
/** Rounds of the row with a goal (each figure their median); the other rows run once. */
const GOAL_ROUNDS = 3;

interface Format {
  name: string;
  type: MediaType;
  /** ffmpeg's arguments that make the input, and that the reference encodes with. */
  encoder: string[];
}

const FORMATS: Format[] = [
  {
    name: 'MP3 128 kbps CBR',
    type: { kind: 'audio', ext: 'mp3', contentType: 'audio/mpeg' },
    encoder: ['-c:a', 'libmp3lame', '-b:a', '128k', '-f', 'mp3'],
  },
  {
    name: 'M4A (AAC 128 kbps)',
    type: { kind: 'audio', ext: 'm4a', contentType: 'audio/mp4' },
    encoder: ['-c:a', 'aac', '-b:a', '128k', '-f', 'ipod'],
  },
  {
    name: 'WAV 16-bit',
    type: { kind: 'audio', ext: 'wav', contentType: 'audio/wav' },
    encoder: ['-c:a', 'pcm_s16le', '-f', 'wav'],
  },
];

const ffmpeg = (args: string[]) => exec('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...args], { maxBuffer: 16 << 20 });

export async function run(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-job-speed-'));
  try {
    const wav = join(dir, 'speech.wav');
    await writeWavFile(wav, { sampleRate: RATE, channels: 2, bits: 16 }, SECONDS, speechLike(RATE, 2, 11, -26));
    const inputs = new Map<Format, string>();
    for (const format of FORMATS) {
      const path = join(dir, `input.${format.type.ext}`);
      if (format.type.ext === 'wav') inputs.set(format, wav);
      else {
        await ffmpeg(['-i', wav, '-metadata', 'title=Episode 12', ...format.encoder, path]);
        inputs.set(format, path);
      }
    }
    const warmUp = join(dir, 'warm-up.wav');
    await writeWavFile(warmUp, { sampleRate: RATE, channels: 2, bits: 16 }, 5, speechLike(RATE, 2, 3, -26));
    const job = (format: Format, model: SettingsModel, inputPath = inputs.get(format)!) =>
      cpuSeconds(() =>
        processMedia(
          {
            inputPath,
            outputPath: join(dir, `out.${format.type.ext}`),
            input: format.type,
            settings: { loudness_target: -16, true_peak: -1, enhancement_model: model, enhancement_level: 100 },
          },
          { ffmpegPath: 'ffmpeg' },
        ),
      );
    // ffmpeg's one-pass normalizer and the same encoder, in one run of ffmpeg.
    const reference = (format: Format) =>
      cpuSeconds(() =>
        ffmpeg([
          '-i',
          inputs.get(format)!,
          '-af',
          'loudnorm=I=-16:TP=-1',
          '-ar',
          String(RATE),
          ...format.encoder,
          join(dir, `reference.${format.type.ext}`),
        ]),
      );
    // Warm-up: each model's code compiled and its network loaded, as in an engine that has run a job.
    for (const model of ['LOUDNESS_ONLY', 'FINCH', 'LARK_V2'] as const) await job(FORMATS[2], model, warmUp);

    const realtime = (cpu: CpuSeconds) => `${(SECONDS / cpu.total).toFixed(1)}x realtime`;
    const split = (cpu: CpuSeconds) => `${cpu.total.toFixed(1)} s (${cpu.children.toFixed(1)} s in ffmpeg)`;
    const rows: string[][] = [
      ['format, model', 'ours: CPU, speed', 'ffmpeg loudnorm + encode', 'reference / ours', 'goal'],
    ];
    const median = (values: CpuSeconds[]) =>
      [...values].sort((a, b) => a.total - b.total)[Math.floor(values.length / 2)];
    for (const format of FORMATS) {
      for (const model of ['LOUDNESS_ONLY', 'FINCH', 'LARK_V2'] as const) {
        const goal = format === FORMATS[0] && model === 'LOUDNESS_ONLY';
        // Interleaved, so a passing load elsewhere weighs on both alike.
        const ours: CpuSeconds[] = [];
        const theirs: CpuSeconds[] = [];
        for (let round = 0; round < (goal ? GOAL_ROUNDS : 1); round++) {
          theirs.push(await reference(format));
          ours.push(await job(format, model));
        }
        const [o, t] = [median(ours), median(theirs)];
        rows.push([
          `${format.name}, ${model}`,
          `${split(o)}, ${realtime(o)}`,
          `${split(t)}, ${realtime(t)}`,
          (t.total / o.total).toFixed(2),
          goal ? '>= 0.8' : '',
        ]);
      }
    }
    return {
      title: `A whole job in CPU time: ${SECONDS / 60} min of 44.1 kHz stereo speech to -16 LUFS / -1 dBTP, against ffmpeg loudnorm + the same encode`,
      table: rows,
      writtenAlone: true,
      notes: [
        "Ours: the engine's processor as a worker thread runs it, on one thread (no other thread lent), from the uploaded file to the delivered one: ffprobe, decoding, measuring, the model's chain, normalization, the encode in the input's own encoding with its tags, and decoding the encoded file again to measure what it holds. CPU time is this process's and that of the ffmpeg and ffprobe it started (/proc's cutime).",
        'Speed = audio seconds per CPU second on one core: a job on a busy machine, or lent more threads, takes its own wall time.',
        'Reference: `ffmpeg -af loudnorm=I=-16:TP=-1 -ar 44100` with the same encoder and bitrate, in one ffmpeg run (loudnorm resamples to 192 kHz inside).',
        `The LOUDNESS_ONLY MP3 row is the median of ${GOAL_ROUNDS} interleaved rounds, the others one round, after a warm-up job per model.`,
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
