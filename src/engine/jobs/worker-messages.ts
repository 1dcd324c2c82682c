// What the worker pool and its threads say to each other.
import type { EndThread } from '../../enhance/thread-end';
import type { ProcessJob, ProcessResult } from '../processors/processor';

export interface WorkerError {
  code: string;
  message: string;
}

export type ToWorker =
  /** Process a media; `threads` is how many of the pool's threads it may split into. */
  | { type: 'job'; id: number; job: ProcessJob; threads: number }
  /** Run a part of another thread's job. */
  | { type: 'task'; task: unknown }
  /** The answer to a 'lend': no result and no error means no thread was free. */
  | { type: 'lent'; requestId: number; result?: unknown; error?: WorkerError }
  /** End once the network's run in flight has returned (thread-end.ts). */
  | EndThread;

export type FromWorker =
  | { type: 'job-done'; id: number; result?: ProcessResult; error?: WorkerError }
  /** How much of the job is done, 0 to 1. */
  | { type: 'job-progress'; id: number; share: number }
  /** Asks for a free thread to run a part of this thread's job. */
  | { type: 'lend'; requestId: number; task: unknown }
  | { type: 'task-done'; result?: unknown; error?: WorkerError }
  /** A program (ffmpeg, ffprobe) this thread started or saw end: the pool kills those left when it closes. */
  | { type: 'child'; pid: number; running: boolean };
