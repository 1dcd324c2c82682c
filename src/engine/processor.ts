// The seam between the engine and what it does to a media. A processor is a module run in the worker
// threads; the default normalizes loudness (loudness-processor), another copies the input (copy-processor).
import type { MediaType } from './media-type';

export interface ProcessSettings {
  loudness_target: number;
  true_peak: number;
  enhancement_level?: number;
  enhancement_model: string;
  transcode?: 'MP3' | 'WAV';
}

export interface ProcessJob {
  inputPath: string;
  outputPath: string;
  input: MediaType;
  settings: ProcessSettings;
}

export interface ProcessResult {
  /** Merged into the media's `enhancement_params`. */
  params: Record<string, unknown>;
  /** What the output file is. */
  output: MediaType;
}

/** What the engine tells every processor, whatever the job. */
export interface ProcessContext {
  /** The ffmpeg program to run for formats other than WAV. */
  ffmpegPath: string;
}

/** What a processor module exports. */
export interface Processor {
  processMedia(job: ProcessJob, context: ProcessContext): Promise<ProcessResult>;
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
