// The seam between the engine and what it does to a media. A processor is a module run in the worker
// threads; the default enhances speech and normalizes loudness (enhance-processor), another copies the input (copy-processor).
import type { DereverbSettings, OutputEncodingSettings, TrimPausesSettings } from '../../contract/extensions';
import type { AppliedOutput, OutputSettings, SettingsModel } from '../../contract/fields';
import type { LoudnessTrack } from '../../contract/loudness-report';
import type { MediaType } from '../storage/media-type';

export interface ProcessSettings extends OutputEncodingSettings, TrimPausesSettings, DereverbSettings {
  loudness_target: number;
  true_peak: number;
  enhancement_level?: number;
  enhancement_model: SettingsModel;
  transcode?: 'MP3' | 'WAV';
  /** The several-outputs extension: the files made beyond the output. */
  outputs?: OutputSettings[];
}

export interface ProcessJob {
  inputPath: string;
  outputPath: string;
  input: MediaType;
  settings: ProcessSettings;
  /** Where each extra output (`settings.outputs`, by name) is written, complete before the job ends. */
  namedOutputPaths?: Record<string, string>;
}

/** An extra output made (several outputs): its name, its format, and what its metadata echoes. */
export interface ProducedOutput {
  name: string;
  output: MediaType;
  /** `output_encoding` as the output's is reported, its loudness and whether it reached the target. */
  params: Omit<AppliedOutput, 'name' | 'file_name'>;
}

export interface ProcessResult {
  /** Merged into the media's `enhancement_params`. */
  params: Record<string, unknown>;
  /** What the output file is. */
  output: MediaType;
  /** The loudness over time of the user's file and of the delivered one, when the processor measured them. */
  loudness?: { input: LoudnessTrack; output: LoudnessTrack };
  /** The extra outputs made, each complete at its `namedOutputPaths` place. */
  outputs?: ProducedOutput[];
}

/** What the engine tells every processor, whatever the job. */
export interface ProcessContext {
  /** The ffmpeg program to run for formats other than WAV. */
  ffmpegPath: string;
  /** How long ffmpeg or ffprobe may make no progress before it is killed (ms). Default: child-runs' DEFAULT_STALL_MS. */
  ffmpegStallMs?: number;
  /** Most bytes a compressed input may decode to (32-bit float WAV); more is refused, MEDIA_TOO_LARGE. Default 8 GiB. */
  maxDecodedBytes?: number;
  /** Most gain reduction the true-peak limiter may apply (dB); a target that needs more is left unreached. Default 8. */
  maxLimitingDb?: number;
}

/**
 * The pool's other threads, lent for parts of one job (a file's channels): `threads` is how many the
 * job may split into, its own included; `runElsewhere` runs a part on a free thread through the
 * processor's `runTask`, or resolves undefined when none is free (the job then runs the part itself).
 */
export interface ThreadHelp {
  threads: number;
  runElsewhere(task: unknown): Promise<unknown>;
  /** Tells the engine how much of the job is done (0 to 1); called as often as the processor likes. */
  progress?(share: number): void;
}

/** What a processor module exports. */
export interface Processor {
  processMedia(job: ProcessJob, context: ProcessContext, help?: ThreadHelp): Promise<ProcessResult>;
  /** Runs a part of a job that another thread lent out. */
  runTask?(task: unknown): Promise<unknown>;
}

/** A failure a processor reports; `code` ends up in the media's `error`. */
export class ProcessingError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
