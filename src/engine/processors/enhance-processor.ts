// The engine's default processor: speech enhancement (src/enhance: high-pass, hum removal, noise
// reduction by DeepFilterNet3 or RNNoise, leveler, as the model says) and then loudness normalization (src/audio), for audio
// and for a video's soundtrack. WAV is read and written directly; every other format goes through
// ffmpeg when it is installed. One stage a file, in the order they run: decode, measure, enhance,
// trim (pauses, when asked), normalize (with the encode), the extra outputs (when asked), deliver.
import { measureWavFile } from '../../audio/measure';
import { LOUDNESS_ONLY_MODEL } from '../../contract/extensions';
import type { EnhancementModel } from '../../enhance/chain-types';
import { runChannelTask, type ChannelTask } from '../../enhance/channel-task';
import { decodeStage } from './decode-stage';
import { deliverStage } from './deliver-stage';
import { checkDereverbSettings, enhanceStage } from './enhance-stage';
import { loudnessTarget, normalizeStage } from './normalize-stage';
import { outputType, planOutputEncoding, requireFfmpeg } from './output-plan';
import { anyEncoded, outputsStage, planExtraOutputs, type PlannedOutput } from './outputs-stage';
import {
  ProcessingError,
  type ProcessContext,
  type ProcessJob,
  type ProcessResult,
  type ThreadHelp,
} from './processor';
import { StagedProgress, type StageWeights } from './staged-progress';
import type { MediaType } from '../storage/media-type';
import { checkTrimSettings, movedChapters, trimStage } from './trim-stage';
import { removeWorkFiles, workFiles } from './work-files';

/**
 * How long each stage takes against the others, per chain (from their times on a minute of speech in the
 * engine): the enhancement is most of the work, the more so the heavier the model; normalizing a WAV takes
 * about half of FINCH's enhancement. Decoding counts only for non-WAV input. An output other than WAV is
 * normalized, encoded, decoded and measured once or twice (encode-normalized.ts): its last stage takes
 * about three times FINCH's enhancement (ENCODED_NORMALIZE_WEIGHT). Only the share shown rests on these:
 * the time left is measured (jobs/progress-estimate.ts).
 */
const STAGE_WEIGHTS: Record<EnhancementModel, StageWeights> = {
  FINCH: { decode: 1, measure: 1, enhance: 5, normalize: 5, outputs: 0 },
  LARK: { decode: 1, measure: 1, enhance: 30, normalize: 3, outputs: 0 },
  LARK_V2: { decode: 1, measure: 1, enhance: 32, normalize: 3, outputs: 0 },
};
const LOUDNESS_ONLY_WEIGHTS: StageWeights = { decode: 1, measure: 1, enhance: 0, normalize: 3, outputs: 0 };
const ENCODED_NORMALIZE_WEIGHT = 15;
/** An extra output encoded from the normalized audio: the encode loop without the first normalization. */
const ENCODED_OUTPUT_WEIGHT = 10;
/** An extra WAV output: one pass over the normalized audio, or a copy. */
const WAV_OUTPUT_WEIGHT = 1;

/** A file's channels lent to another thread of the pool. */
export const runTask = (task: unknown) => runChannelTask(task as ChannelTask);

export async function processMedia(
  job: ProcessJob,
  context: ProcessContext = { ffmpegPath: 'ffmpeg' },
  help?: ThreadHelp,
): Promise<ProcessResult> {
  const output = outputType(job);
  const work = workFiles(job.outputPath);
  await removeWorkFiles(job.outputPath);
  await requireFfmpeg(job, output, context);
  checkTrimSettings(job);
  checkDereverbSettings(job);
  try {
    // Checked before the work: the encoding each output keeps or was asked for.
    const extras = await planExtraOutputs(job, context);
    const progress = stagedProgress(job, output, extras, help);
    progress.at('decode');
    const decoded = await decodeStage(job, context, work, progress.of('decode'));
    if ('unchanged' in decoded) {
      if (extras.length > 0)
        throw new ProcessingError(
          'NO_AUDIO',
          `outputs: the ${job.input.ext.toUpperCase()} video has no audio stream, so there is no sound to make ${extras.map((plan) => `"${plan.settings.name}"`).join(', ')} of`,
        );
      return decoded.unchanged;
    }
    const encoding = output.ext === 'wav' ? undefined : await planOutputEncoding(job, output, context.ffmpegPath);
    // The loudness the user's file had, before enhancement changed it. Read whole, so a damaged file
    // fails here: any invalid WAV met after this is one the engine made.
    progress.at('measure');
    const original = await measureWavFile(decoded.source, undefined, progress.of('measure'));
    progress.at('enhance');
    const enhanced = await enhanceStage(job, decoded.source, original, work, {
      threads: help?.threads,
      runElsewhere: help?.runElsewhere.bind(help),
      onProgress: progress.of('enhance'),
    });
    const trimmed = await trimStage(job, enhanced, work);
    progress.at('normalize');
    const chapters =
      output.ext !== 'wav' || anyEncoded(extras)
        ? await movedChapters(job, trimmed, context.ffmpegPath, work)
        : undefined;
    const { report, first } = await normalizeStage(
      job,
      // Loudness only, untrimmed, normalizes the user's audio as it was measured above.
      { path: trimmed.path, measured: trimmed.path === decoded.source ? original : undefined },
      output,
      encoding,
      context,
      work,
      original,
      progress.of('normalize'),
      output.ext === 'wav' ? undefined : chapters,
    );
    // Before the delivery, which may add the input WAV's chunks to a WAV output the outputs copy.
    progress.at('outputs');
    const outputs = await outputsStage(
      job,
      extras,
      first,
      context,
      work,
      loudnessTarget(job, context),
      progress.of('outputs'),
      chapters,
    );
    const result = await deliverStage(job, {
      output,
      encoding,
      original,
      enhanced,
      trimmed: trimmed.report,
      report,
      target: loudnessTarget(job, context),
    });
    return outputs.length > 0 ? { ...result, outputs } : result;
  } catch (err) {
    throw asProcessingError(err);
  } finally {
    await removeWorkFiles(job.outputPath);
  }
}

/**
 * The stages weighed for the job's model; a WAV input has no decode, an output other than WAV is encoded,
 * and each extra output adds its encode (or its pass, for a WAV).
 */
function stagedProgress(
  job: ProcessJob,
  output: MediaType,
  extras: PlannedOutput[],
  help: ThreadHelp | undefined,
): StagedProgress {
  const model = job.settings.enhancement_model;
  const weights = model === LOUDNESS_ONLY_MODEL ? LOUDNESS_ONLY_WEIGHTS : STAGE_WEIGHTS[model];
  return new StagedProgress(
    {
      ...weights,
      ...(job.input.ext === 'wav' ? { decode: 0 } : {}),
      ...(output.ext !== 'wav' ? { normalize: ENCODED_NORMALIZE_WEIGHT } : {}),
      outputs: extras.reduce(
        (sum, plan) => sum + (plan.output.ext === 'wav' ? WAV_OUTPUT_WEIGHT : ENCODED_OUTPUT_WEIGHT),
        0,
      ),
    },
    help?.progress?.bind(help),
  );
}

/** The lower layers' failures a user can act on, as the media's failure codes. */
function asProcessingError(err: unknown): unknown {
  if (err instanceof ProcessingError) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'INVALID_WAV' || code === 'DECODE_FAILED' || code === 'FFMPEG_REQUIRED' || code === 'NO_AUDIO')
    return new ProcessingError(code === 'INVALID_WAV' ? 'INVALID_MEDIA' : code, (err as Error).message);
  return err;
}
