// The last stage: the output in place and whole, and the result the media's metadata and loudness report
// are made of. A silent file is returned as it came, never amplified (and in its own format).
import { copyFile } from 'node:fs/promises';
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import type { EncodingPlan } from '../../audio/output-encoding';
import { copyWavChunks } from '../../audio/wav-chunks';
import { checkCopyWhole, checkWavWhole } from '../../audio/whole-file';
import type { EnhancementModel } from '../../enhance/chain-types';
import { enhancementParams } from '../../enhance/report';
import type { MediaType } from '../storage/media-type';
import type { EncodedReport } from './encoder-rounds';
import type { LoudnessTarget } from './first-round';
import type { Enhanced } from './enhance-stage';
import { loudnessTrack } from './loudness-track';
import type { ProcessJob, ProcessResult } from './processor';
import { loudnessParams, notApplied, pausesTrimmed } from './processing-report';
import type { TrimReport } from '../../audio/trim-pauses';

export interface Processed {
  output: MediaType;
  encoding: EncodingPlan | undefined;
  /** The user's file as read, before enhancement. */
  original: LoudnessMeasurement;
  enhanced: Enhanced;
  /** The pauses trimmed, when asked. */
  trimmed?: TrimReport & { limitS: number };
  report: EncodedReport;
  target: LoudnessTarget;
}

export async function deliverStage(job: ProcessJob, processed: Processed): Promise<ProcessResult> {
  const { output, encoding, original, enhanced, trimmed, report, target } = processed;
  const model = job.settings.enhancement_model;
  const returnedAsItCame = report.unchangedBecause !== undefined && job.input.ext === output.ext;
  if (returnedAsItCame) await copyFile(job.inputPath, job.outputPath);
  // A WAV written here carries over the input WAV's tags and metadata chunks (LIST/INFO, bext, iXML...).
  else if (output.ext === 'wav' && job.input.ext === 'wav') await copyWavChunks(job.inputPath, job.outputPath);
  // Never delivered unless whole: a file cut short (a full disk) fails the job's try, and it is tried again.
  if (returnedAsItCame) await checkCopyWhole(job.inputPath, job.outputPath);
  else if (output.ext === 'wav') await checkWavWhole(job.outputPath);
  return {
    params: {
      // A file returned as it came had nothing done to it: the report must not claim the chain's work.
      ...(returnedAsItCame || !enhanced.report
        ? notApplied(model, returnedAsItCame ? 'the file is returned as it came' : 'loudness only was asked')
        : enhancementParams(model as EnhancementModel, enhanced.report)),
      ...loudnessParams({ ...report, input: original }, returnedAsItCame, !enhanced.report, target),
      ...(encoding && !returnedAsItCame ? { output_encoding: encoding.applied } : {}),
      ...(trimmed && !returnedAsItCame ? { pauses_trimmed: pausesTrimmed(trimmed) } : {}),
    },
    output,
    // Both measured in passes made anyway: the original as read, the output as written (or decoded after encoding).
    loudness: {
      input: loudnessTrack(original),
      output: loudnessTrack(returnedAsItCame ? original : report.output),
    },
  };
}
