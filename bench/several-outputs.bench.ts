// What several outputs from one job cost (docs/interface.md#several-outputs): a WAV master and an MP3 for
// the feed from one MP3 upload, against the same two files made by two jobs (what a user does without the
// extension) and against the feed alone, in CPU time (the processor and the ffmpeg it starts), same run.
// The extra output is encoded from the audio the job already normalized: never enhanced twice.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { SettingsModel } from '../src/contract/fields';
import { processMedia } from '../src/engine/processors/enhance-processor';
import type { ProcessSettings } from '../src/engine/processors/processor';
import type { MediaType } from '../src/engine/storage/media-type';
import { speechLike, writeWavFile } from '../test/fixtures/audio';
import { cpuSeconds, type CpuSeconds } from './job-cpu';
import type { BenchReport } from './run';

const exec = promisify(execFile);
const SECONDS = 120;
const RATE = 44_100;
const MP3: MediaType = { kind: 'audio', ext: 'mp3', contentType: 'audio/mpeg' };
const FEED = { transcode: 'MP3', bitrate_kbps: 96, bitrate_mode: 'CBR', downmix_mono: true } as const;

export async function run(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-several-outputs-'));
  try {
    const wav = join(dir, 'speech.wav');
    await writeWavFile(wav, { sampleRate: RATE, channels: 2, bits: 16 }, SECONDS, speechLike(RATE, 2, 11, -26));
    const input = join(dir, 'episode.mp3');
    await exec('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-i', wav, '-c:a', 'libmp3lame', '-b:a', '128k', input]);
    const job = (settings: Omit<ProcessSettings, 'loudness_target' | 'true_peak'>, name: string, inputPath = input) =>
      processMedia(
        {
          inputPath,
          outputPath: join(dir, `${name}.out`),
          input: MP3,
          settings: { loudness_target: -16, true_peak: -1, ...settings },
          ...(settings.outputs ? { namedOutputPaths: { feed: join(dir, `${name}.feed`) } } : {}),
        },
        { ffmpegPath: 'ffmpeg' },
      );
    const short = join(dir, 'warm-up.mp3');
    await exec('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-i', wav, '-t', '5', '-c:a', 'libmp3lame', short]);

    const rows: string[][] = [
      [
        'model',
        'feed alone (1 job)',
        'master + feed, 1 job',
        'master, then feed (2 jobs)',
        '1 job / 2 jobs',
        '1 job / feed alone',
      ],
    ];
    const cpu = (c: CpuSeconds) => `${c.total.toFixed(1)} s (${c.children.toFixed(1)} s in ffmpeg)`;
    for (const model of ['LOUDNESS_ONLY', 'FINCH'] as SettingsModel[]) {
      await job({ enhancement_model: model, transcode: 'WAV', outputs: [{ name: 'feed', ...FEED }] }, 'warm', short);
      const feedAlone = await cpuSeconds(() => job({ enhancement_model: model, ...FEED }, 'alone'));
      const together = await cpuSeconds(() =>
        job({ enhancement_model: model, transcode: 'WAV', outputs: [{ name: 'feed', ...FEED }] }, 'together'),
      );
      const master = await cpuSeconds(() => job({ enhancement_model: model, transcode: 'WAV' }, 'master'));
      const feed = await cpuSeconds(() => job({ enhancement_model: model, ...FEED }, 'feed'));
      const twoJobs = master.total + feed.total;
      rows.push([
        model,
        cpu(feedAlone),
        cpu(together),
        `${twoJobs.toFixed(1)} s`,
        (together.total / twoJobs).toFixed(2),
        (together.total / feedAlone.total).toFixed(2),
      ]);
    }
    return {
      title: `Several outputs: a WAV master and a 96 kbps mono MP3 feed from ${SECONDS / 60} min of 44.1 kHz stereo speech (MP3 128k), CPU time`,
      table: rows,
      writtenAlone: true,
      notes: [
        "CPU time of the engine's processor on one thread and of the ffmpeg and ffprobe it starts (/proc's cutime), from the uploaded MP3 to the delivered files, after a warm-up job per model.",
        "1 job: `transcode: WAV` with `outputs: [{name: 'feed', transcode: 'MP3', bitrate_kbps: 96, bitrate_mode: 'CBR', downmix_mono: true}]`: one decode, one enhancement, one normalization; the feed is encoded from the normalized audio. 2 jobs: the same files from two uploads, each decoded, enhanced and normalized.",
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
