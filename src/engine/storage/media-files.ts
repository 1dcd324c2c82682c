// The files of a media (the user's original, the enhanced result, the loudness report) apart from its
// record: kept in the data folder (local-media-files.ts, the default) or in an S3 bucket
// (s3-media-files.ts, `--storage s3://...`), so that several engines can serve the same media.
import type { Readable, Writable } from 'node:stream';
import type { LoudnessReport } from '../../contract/loudness-report';
import type { UploadFs } from '../faults';
import { PartUnavailableError } from '../part-unavailable';

/**
 * The files of a media: what the user sent, what the engine made of it, and the extra outputs it was
 * asked for (the several-outputs extension), each `output-<name>`.
 */
export type MediaFileName = 'input' | 'output' | NamedOutputFile;
export type NamedOutputFile = `output-${string}`;

/** The stored file of the output named `name` (a name checked by OUTPUT_NAME: letters, digits, `_`, `-`). */
export function namedOutputFile(name: string): NamedOutputFile {
  return `output-${name}`;
}

/** Whether a stored file is one a user's download may read (the input, the output, a named output). */
export function isMediaFile(name: string): name is MediaFileName {
  return name === 'input' || name === 'output' || name.startsWith('output-');
}

/** An upload on its way into the storage, before it is accepted as a media's input. */
export interface IncomingFile {
  /** The media it is received for (MediaRecords.newUid): its file may be stored where the input goes, never copied. */
  readonly uid: string;
  /** Where the upload's bytes are on this machine, when they are (the data folder); undefined in remote storage. */
  readonly localPath?: string;
  /** Where the upload's bytes go, as they arrive. */
  readonly stream: Writable;
  /** Resolves once every byte written to `stream` is stored (after `stream` finished); rejects if not. */
  stored(): Promise<void>;
  /** Why the storage failed the upload, once it has (the stream then fails too, for that reason or another). */
  failure(): unknown;
  /** Makes the stored upload the input of its media, the place of the media's files readied first. */
  keep(): Promise<void>;
  /** Removes whatever of the upload was stored (or stops its transfer); never rejects. */
  discard(): Promise<void>;
}

/** Local files a job works on; where the storage is remote, they are copies, removed by `close`. */
export interface WorkFiles {
  readonly inputPath: string;
  readonly outputPath: string;
  /** Brings the stored input to `inputPath`. */
  loadInput(): Promise<void>;
  /** Stores what was written to `inputPath` (a fetched input) as the media's input. */
  saveInput(): Promise<void>;
  /** Stores the complete file at `outputPath` as the media's output, under a fixed name: a job run twice leaves one. */
  saveOutput(): Promise<void>;
  /** Where the job writes its extra output `name` (several-outputs), complete before it is stored. */
  namedOutputPath(name: string): string;
  /** Stores the complete file at `namedOutputPath(name)` as the media's output `name`. */
  saveNamedOutput(name: string): Promise<void>;
  /** Removes the work files that are copies; never rejects. */
  close(): Promise<void>;
}

export interface MediaFiles {
  /** Readies the storage (folders, the bucket) and removes what an earlier run left half done. */
  open(): Promise<void>;
  /** Resolves when the storage answers; rejects with StorageUnavailableError when it does not. */
  ping(): Promise<void>;
  /** Lets go of what the storage holds open (an S3 client's connections); the engine is closing. */
  close(): void;
  /** Starts receiving an upload for media `uid`. `fs` (local storage only) replaces the file system, to inject faults. */
  receive(uid: string, fs?: UploadFs): IncomingFile;
  /** Readies the place of a new media's files (its folder in the data folder; nothing in a bucket); done already is fine. */
  prepare(uid: string): Promise<void>;
  size(uid: string, file: MediaFileName): Promise<number>;
  /** Bytes `start` to `end` (inclusive) of a file, streamed. */
  read(uid: string, file: MediaFileName, start: number, end: number): Promise<Readable>;
  /** The local files a job of media `uid` works on. */
  work(uid: string): Promise<WorkFiles>;
  /** Stores the media's loudness report whole, before the media is COMPLETED. */
  saveLoudnessReport(uid: string, report: LoudnessReport): Promise<void>;
  /** The report's JSON bytes, or undefined when the engine made none for this media. */
  loudnessReportJson(uid: string): Promise<Buffer | undefined>;
  /** Deletes every file of the media. */
  remove(uid: string): Promise<void>;
  /** Bytes of the media's input and outputs (its extra outputs included). */
  fileBytes(uid: string): Promise<number>;
  /** Bytes of everything kept for the media: what its removal gives back. */
  allBytes(uid: string): Promise<number>;
  /** Bytes of every media file kept, uploads still arriving and work files included. */
  bytesUsed(): Promise<number>;
  /**
   * Removes what a crash left behind and no media owns (S3: multipart uploads never completed, objects of
   * a uid never put on record), once stale at `now`; what it removed, told for the log. Local files have
   * none to sweep here (their unfinished uploads go at start).
   */
  sweepLeftovers?(owned: (uid: string) => Promise<boolean>, now: number): Promise<string[]>;
}

/** How long a caller should wait before trying again while the storage does not answer. */
export const STORAGE_RETRY_AFTER_S = 5;

/**
 * The storage did not answer (down, unreachable, overloaded): nothing the caller did wrong, and nothing
 * was accepted; the server answers 503 with Retry-After. The message names the storage, never a secret.
 */
export class StorageUnavailableError extends PartUnavailableError {
  constructor(message: string) {
    super(message, `${message}; nothing was stored, retry later`, STORAGE_RETRY_AFTER_S);
    this.name = 'StorageUnavailableError';
  }
}
