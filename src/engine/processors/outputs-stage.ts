// The extra outputs of a job (the several-outputs extension, docs/interface.md#several-outputs): each
// written from the job's one normalization (the first round the ENHANCED output started from), a WAV as
// it is, an encoded one through the same measure-and-encode loop as the ENHANCED file. Planned before
// any work, so a choice that cannot apply fails the job at once.
import { copyFile, rename } from 'node:fs/promises';
import { normalizeWavFile, onTarget } from '../../audio/normalize';
import type { EncodingPlan } from '../../audio/output-encoding';
import { copyWavChunks } from '../../audio/wav-chunks';
import { checkWavWhole } from '../../audio/whole-file';
import type { OutputSettings } from '../../contract/fields';
import type { MediaType } from '../storage/media-type';
import { DEFAULT_LOOKAHEAD_MS } from '../../audio/true-peak-limiter';
import { encodeNormalized } from './encode-normalized';
import type { EncodedReport } from './encoder-rounds';
import type { FirstRound, LoudnessTarget } from './first-round';
import { wavOutputFormat, wavRound } from './normalize-stage';
import { extraOutputType, planOutputEncoding } from './output-plan';
import { ProcessingError, type ProcessContext, type ProcessJob, type ProducedOutput } from './processor';
import type { WorkFile } from './work-files';

/** One extra output as planned: its format and, encoded, its encoder's arguments. */
export interface PlannedOutput {
  settings: OutputSettings;
  output: MediaType;
  encoding?: EncodingPlan;
}

/** The extra outputs' formats and encodings, from the input's own and each output's choices. */
export async function planExtraOutputs(job: ProcessJob, context: ProcessContext): Promise<PlannedOutput[]> {
  const planned: PlannedOutput[] = [];
  for (const settings of job.settings.outputs ?? []) {
    if (!job.namedOutputPaths?.[settings.name])
      throw new ProcessingError('PROCESSING_FAILED', `output "${settings.name}": the engine gave it no place`);
    const output = await extraOutputType(job, settings, context.ffmpegPath);
    try {
      const encoding =
        output.ext === 'wav' ? undefined : await planOutputEncoding(job, output, context.ffmpegPath, settings);
      planned.push({ settings, output, ...(encoding ? { encoding } : {}) });
    } catch (err) {
      if (err instanceof ProcessingError)
        throw new ProcessingError(err.code, `output "${settings.name}": ${err.message}`);
      throw err;
    }
  }
  return planned;
}

/** Whether any planned output goes through an encoder (and so may carry chapters). */
export function anyEncoded(planned: PlannedOutput[]): boolean {
  return planned.some((plan) => plan.output.ext !== 'wav');
}

/**
 * Writes every planned output from `first` to its place (`job.namedOutputPaths`), each its progress told
 * as its share of `onProgress`. `work` is the job's work files: each output works in its own among them.
 */
export async function outputsStage(
  job: ProcessJob,
  planned: PlannedOutput[],
  first: FirstRound,
  context: ProcessContext,
  work: WorkFile,
  target: LoudnessTarget,
  onProgress: (share: number) => void,
  /** Chapters that replace the input's (an FFMETADATA file), when the audio moved. */
  chapters?: string,
): Promise<ProducedOutput[]> {
  const produced: ProducedOutput[] = [];
  for (const [index, plan] of planned.entries()) {
    const { name } = plan.settings;
    const destination = job.namedOutputPaths![name];
    const part = (share: number) => onProgress((index + share) / planned.length);
    const ownWork = outputWorkFiles(work, name);
    const report =
      plan.output.ext === 'wav'
        ? await wavOutput(job, first, destination, ownWork, target, part)
        : await encodeNormalized(
            job,
            first,
            plan.output,
            plan.encoding!.args,
            context.ffmpegPath,
            ownWork,
            target,
            part,
            chapters,
            destination,
          );
    produced.push({
      name,
      output: plan.output,
      params: {
        ...(plan.encoding ? { output_encoding: plan.encoding.applied } : {}),
        output_loudness_lufs: round(report.output.integratedLufs),
        output_true_peak_dbtp: round(report.output.truePeakDbtp),
        target_reached: report.targetReached,
      },
    });
  }
  onProgress(1);
  return produced;
}

/**
 * An output's own work files, under `out.<name>.`: apart from the job's (`processed.wav`, `trimmed.wav`...),
 * which a name such as `processed` would otherwise reach, and from each other's (a name holds no dot).
 */
function outputWorkFiles(work: WorkFile, name: string): WorkFile {
  return (file) => work(`out.${name}.${file}`);
}

/**
 * A WAV output: the job's WAV output copied when that is the first round (the same format), else the
 * first round's float audio written in the WAV's sample format by one pass of the normalizer at the gain
 * it has already (its peaks measured as written, and held under the ceiling should rounding lift one).
 * A first round limited for a lossy encoder (its longer look-ahead) is not used: the WAV is normalized
 * from the source as the job's WAV output would be.
 */
async function wavOutput(
  job: ProcessJob,
  first: FirstRound,
  destination: string,
  work: WorkFile,
  target: LoudnessTarget,
  onProgress: (share: number) => void,
): Promise<EncodedReport> {
  // Made among the work files, and moved into place only whole.
  const made = work('wav');
  let report = first.report;
  if (first.path === job.outputPath) await copyFile(first.path, made);
  else if (first.lookaheadMs !== DEFAULT_LOOKAHEAD_MS) {
    const own = await wavRound(
      job,
      { path: first.source, measured: first.report.input },
      made,
      target,
      onProgress,
      first.knownPeaks,
    );
    report = own.report;
  } else {
    const written = await normalizeWavFile(first.path, made, {
      targetLufs: first.report.output.integratedLufs,
      ceilingDbtp: target.ceilingDbtp,
      maxLimitingDb: 0,
      firstGainDb: 0,
      input: first.report.output,
      onProgress,
      outputFormat: await wavOutputFormat(job),
    });
    report = {
      ...first.report,
      output: written.output,
      targetReached: first.report.targetReached && onTarget(written.output.integratedLufs, target.targetLufs),
    };
  }
  // As the ENHANCED WAV: a WAV input's tags and metadata chunks carried over.
  if (job.input.ext === 'wav') await copyWavChunks(job.inputPath, made);
  await checkWavWhole(made);
  await rename(made, destination);
  return report;
}

function round(value: number): number | null {
  return Number.isFinite(value) ? Math.round(value * 100) / 100 : null;
}
