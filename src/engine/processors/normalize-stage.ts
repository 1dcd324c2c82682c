// The normalize stage: loudness normalization and the true-peak limiter to the job's target, written as
// the output WAV (in the input WAV's own sample format) or delivered through the output's encoder.
import { open } from 'node:fs/promises';
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import { EnvelopeBounds } from '../../audio/envelope-bounds';
import { DEFAULT_MAX_LIMITING_DB, normalizeWavFile } from '../../audio/normalize';
import type { EncodingPlan } from '../../audio/output-encoding';
import { readWavLayout } from '../../audio/wav-format';
import { DEFAULT_LOOKAHEAD_MS } from '../../audio/true-peak-limiter';
import type { MediaType } from '../storage/media-type';
import { encodeNormalized } from './encode-normalized';
import type { EncodedReport } from './encoder-rounds';
import { lookaheadMsFor, normalizeFirst, type FirstRound, type LoudnessTarget } from './first-round';
import { unusableOutput } from './enhance-stage';
import type { ProcessContext, ProcessJob } from './processor';
import type { WorkFile } from './work-files';

const PCM24_WAV = { bitsPerSample: 24, encoding: 'int' } as const;

/** The normalized output, and the first round every other output of the job starts from. */
export interface NormalizedOutput {
  report: EncodedReport;
  first: FirstRound;
}

/** The sample format of a WAV output: a WAV input's own, else 24-bit PCM. */
export async function wavOutputFormat(job: ProcessJob): Promise<{ bitsPerSample: number; encoding: 'int' | 'float' }> {
  return job.input.ext === 'wav' ? await sampleFormatOf(job.inputPath) : PCM24_WAV;
}

/** The job's loudness target, with the engine's bound on limiting. */
export function loudnessTarget(job: ProcessJob, context: ProcessContext): LoudnessTarget {
  return {
    targetLufs: job.settings.loudness_target,
    ceilingDbtp: job.settings.true_peak,
    maxLimitingDb: context.maxLimitingDb ?? DEFAULT_MAX_LIMITING_DB,
  };
}

/** `from.measured`: its measurement when the audio is the user's own (loudness only), so it is not read again. */
export async function normalizeStage(
  job: ProcessJob,
  from: { path: string; measured?: LoudnessMeasurement },
  output: MediaType,
  encoding: EncodingPlan | undefined,
  context: ProcessContext,
  work: WorkFile,
  original: LoudnessMeasurement,
  onProgress: (share: number) => void,
  /** Chapters that replace the input's (an FFMETADATA file), when the audio moved. */
  chapters?: string,
): Promise<NormalizedOutput> {
  const target = loudnessTarget(job, context);
  const normalized = async (): Promise<NormalizedOutput> => {
    if (output.ext === 'wav') {
      // A WAV output is the first round itself.
      const first = await wavRound(job, from, job.outputPath, target, onProgress);
      return { report: first.report, first };
    }
    const lookaheadMs = lookaheadMsFor(encoding!.args);
    const first = await normalizeFirst(from, work, target, lookaheadMs, (done) => onProgress(0.4 * done));
    const report = await encodeNormalized(
      job,
      first,
      output,
      encoding!.args,
      context.ffmpegPath,
      work,
      target,
      onProgress,
      chapters,
    );
    return { report, first };
  };
  return normalized().catch((err: unknown) => {
    throw unusableOutput(err, original) || err;
  });
}

/**
 * `from` normalized to the target into the WAV `destination` (in wavOutputFormat), its peaks measured as
 * written, with the limiter's own look-ahead. `knownPeaks`: what earlier rounds over `from` learnt.
 */
export async function wavRound(
  job: ProcessJob,
  from: { path: string; measured?: LoudnessMeasurement },
  destination: string,
  target: LoudnessTarget,
  onProgress: (share: number) => void,
  knownPeaks: EnvelopeBounds = new EnvelopeBounds(),
): Promise<FirstRound> {
  const report = await normalizeWavFile(from.path, destination, {
    ...target,
    input: from.measured,
    knownPeaks,
    onProgress,
    outputFormat: await wavOutputFormat(job),
  });
  return { source: from.path, path: destination, report, knownPeaks, lookaheadMs: DEFAULT_LOOKAHEAD_MS };
}

/** A WAV input comes back in its own sample format. */
async function sampleFormatOf(path: string): Promise<{ bitsPerSample: number; encoding: 'int' | 'float' }> {
  const file = await open(path, 'r');
  try {
    const { bitsPerSample, encoding } = await readWavLayout(file);
    return { bitsPerSample, encoding };
  } finally {
    await file.close();
  }
}
