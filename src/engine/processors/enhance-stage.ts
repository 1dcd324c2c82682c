// The enhance stage: the speech enhancement chain (src/enhance) over the decoded WAV, as the model says
// (with de-reverberation first when `dereverb` asks for it: an extension), into a work file; loudness only (an extension) skips it and hands the decoded audio on as it is.
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import { isDiskFull } from '../../audio/write-fully';
import { enhanceWavFile, type EnhanceReport, type EnhanceRun } from '../../enhance/chain';
import { LOUDNESS_ONLY_MODEL } from '../../contract/extensions';
import { SETTINGS_DEFAULTS } from '../../contract/fields';
import { ProcessingError, type ProcessJob } from './processor';
import type { WorkFile } from './work-files';

export interface Enhanced {
  /** The WAV the normalize stage reads. */
  path: string;
  /** The chain's report; undefined for loudness only. */
  report?: EnhanceReport;
}

export async function enhanceStage(
  job: ProcessJob,
  source: string,
  original: LoudnessMeasurement,
  work: WorkFile,
  run: EnhanceRun,
): Promise<Enhanced> {
  const model = job.settings.enhancement_model;
  // LOUDNESS_ONLY (an extension): music, intros and clean recordings go to the normaliser as they are.
  if (model === LOUDNESS_ONLY_MODEL) return { path: source };
  const level = job.settings.enhancement_level ?? SETTINGS_DEFAULTS.enhancement_level;
  const dereverb = (job.settings.dereverb ?? 0) / 100;
  const report = await enhanceWavFile(source, work('enhanced.wav'), { model, level, dereverb }, run).catch(
    (err: unknown) => {
      // A full disk is not the enhancement's failure: it goes up as it is, and the job waits for room (jobs.ts).
      if (isDiskFull(err)) throw err;
      throw (
        unusableOutput(err, original) ||
        new ProcessingError('ENHANCEMENT_FAILED', `speech enhancement failed: ${(err as Error).message ?? String(err)}`)
      );
    },
  );
  return { path: work('enhanced.wav'), report };
}

/** An invalid WAV met after the input was read whole is one the engine made: the enhancement's failure. */
export function unusableOutput(err: unknown, original: LoudnessMeasurement): ProcessingError | false {
  return (
    (err as { code?: unknown }).code === 'INVALID_WAV' &&
    new ProcessingError(
      'ENHANCEMENT_FAILED',
      `speech enhancement failed: its output is not usable audio (${(err as Error).message}); the input peaks at ${original.samplePeakDbfs.toFixed(0)} dBFS`,
    )
  );
}
