// The seam between the engine and what it does to a media. A processor is a module run in the worker
// threads; the default copies the input, and a loudness processor can take its place.
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

/** What a processor module exports. */
export interface Processor {
  processMedia(job: ProcessJob): Promise<ProcessResult>;
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
