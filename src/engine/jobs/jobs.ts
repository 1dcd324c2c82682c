import { setMaxListeners } from 'node:events';
import { promises as fsp } from 'node:fs';
import { dirname } from 'node:path';
import type { Faults } from '../faults';
import type { FetchGuard } from './fetch-guard';
import { fetchInput } from './fetch-input';
import { ProgressEstimate } from './progress-estimate';
import { publicMessage } from './public-message';
import { sniffMediaType, SNIFF_BYTES } from '../storage/media-type';
import { ProcessingError } from '../processors/processor';
import { HttpError } from '../http/http-error';
import { MediaEndedError, type MediaRecords } from '../storage/media-records';
import { PRIVATE_FILE, type MediaRecord, type MediaStore } from '../storage/store';
import type { WorkerPool } from './worker-pool';

export interface JobOptions {
  processingDelayMs: number;
  fetchTimeoutMs: number;
  maxUploadBytes: number;
  /** Where the enhance-json fetch may connect. */
  fetchGuard: FetchGuard;
  /** The engine's error log (causes a caller is told only in general terms). */
  onErrorLine(line: string): void;
}

/** What the routes hand an accepted media to: in-process Jobs, or the shared queue (cluster/queue-jobs.ts). */
export interface JobStarter {
  /** Resolves once the media is sure to be processed (a shared queue has it). */
  start(record: MediaRecord): void | Promise<void>;
  close(): Promise<void>;
}

/**
 * Takes each accepted media from PENDING through PROCESSING to COMPLETED or FAILED, persisting every
 * step, so a restart picks up where it stopped. The work itself runs in the worker pool.
 */
export class Jobs implements JobStarter {
  private readonly stopping = new AbortController();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly records: MediaRecords,
    /** The media's files. */
    private readonly store: MediaStore,
    private readonly pool: WorkerPool,
    private readonly faults: Faults,
    private readonly options: JobOptions,
    /** Called when a media has ended, COMPLETED or FAILED. */
    private readonly onFinished: () => void = () => undefined,
  ) {
    // Every waiting or fetching media listens to this signal: many at once is normal, not a leak.
    setMaxListeners(0, this.stopping.signal);
  }

  start(record: MediaRecord): void {
    void this.process(record).catch(() => undefined);
  }

  /**
   * Runs the media's job here; resolves when it has ended, or stopped because the engine is closing;
   * rejects when the shared state could not be reached (the job is to run again).
   */
  process(record: MediaRecord): Promise<void> {
    const run = this.run(record).finally(() => {
      this.running.delete(run);
      if (!this.stopping.signal.aborted) this.onFinished();
    });
    this.running.add(run);
    return run;
  }

  /** Whether close() was called: a job that returned meanwhile stopped unfinished. */
  get closing(): boolean {
    return this.stopping.signal.aborted;
  }

  /** Stops taking work; what is unfinished stays PENDING or PROCESSING on disk and resumes on restart. */
  async close(): Promise<void> {
    this.stopping.abort();
    await this.pool.close();
    await Promise.allSettled([...this.running]);
  }

  private async run(record: MediaRecord): Promise<void> {
    try {
      if (record.internal.downloadUrl && !record.internal.input) await this.fetch(record);
      if (this.stopping.signal.aborted) return;
      await this.records.update(record, { enhancement_status: 'PROCESSING' });
      await this.delay(this.options.processingDelayMs);
      if (this.stopping.signal.aborted) return;
      if (this.faults.failProcessing())
        throw new ProcessingError('PROCESSING_FAILED', 'processing failed (an injected fault)');
      const input = record.internal.input!;
      const estimate = new ProgressEstimate();
      const result = await this.pool.run(
        {
          inputPath: this.store.inputPath(record.uid),
          outputPath: this.store.outputPath(record.uid),
          input,
          settings: record.internal.settings,
        },
        (share) => {
          if (record.enhancement_status === 'PROCESSING') this.records.setProgress(record, estimate.update(share));
        },
      );
      if (this.stopping.signal.aborted) return;
      // Whatever wrote it (a processor module, ffmpeg), the result is for the media's owner only.
      await fsp.chmod(this.store.outputPath(record.uid), PRIVATE_FILE);
      if (result.loudness) {
        const { loudness_target, true_peak } = record.internal.settings;
        await this.store.saveLoudnessReport(record.uid, {
          uid: record.uid,
          interval_s: 1,
          target_lufs: loudness_target,
          true_peak_limit_dbtp: true_peak,
          ...result.loudness,
        });
      }
      await this.records.update(record, {
        enhancement_status: 'COMPLETED',
        enhancement_params: { ...record.enhancement_params, ...result.params },
        internal: { ...record.internal, output: result.output },
      });
    } catch (err) {
      if (this.stopping.signal.aborted) return; // not a failure of the media: it resumes on restart
      if (err instanceof MediaEndedError) return; // another instance ran it to its end: its result stands
      // The shared state is away (cluster): not a failure of the media; the queue runs the job again.
      if (err instanceof HttpError && err.status === 503) throw err;
      const code = err instanceof ProcessingError ? err.code : 'PROCESSING_FAILED';
      const message = publicMessage(err instanceof Error ? err.message : String(err), dirname(this.store.root));
      await this.records
        .update(record, { enhancement_status: 'FAILED', error: { code, message } })
        .catch(() => undefined);
    }
  }

  private async fetch(record: MediaRecord): Promise<void> {
    const path = this.store.inputPath(record.uid);
    await fetchInput(record.internal.downloadUrl!, path, {
      timeoutMs: this.options.fetchTimeoutMs,
      maxBytes: this.options.maxUploadBytes,
      signal: this.stopping.signal,
      guard: this.options.fetchGuard,
      log: (line) => this.options.onErrorLine(`media ${record.uid}: ${line}`),
    });
    const handle = await fsp.open(path, 'r');
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0).finally(() => handle.close());
    const type = sniffMediaType(head.subarray(0, bytesRead));
    if (!type)
      throw new ProcessingError(
        'UNSUPPORTED_MEDIA',
        'file_download_url: the fetched file is not a recognised audio or video container',
      );
    await this.records.update(record, { internal: { ...record.internal, input: type } });
  }

  private delay(ms: number): Promise<void> {
    const signal = this.stopping.signal;
    if (ms <= 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const stop = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', stop);
        resolve();
      }, ms);
      signal.addEventListener('abort', stop, { once: true });
    });
  }
}
