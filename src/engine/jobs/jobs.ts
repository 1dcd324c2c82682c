import { setMaxListeners } from 'node:events';
import { promises as fsp } from 'node:fs';
import type { Faults } from '../faults';
import type { FetchGuard } from './fetch-guard';
import { fetchInput } from './fetch-input';
import { LeftForAnotherInstance, needsFfmpeg } from './ffmpeg-need';
import type { MediaProgress } from '../../contract/media-progress';
import { appliedOutputs, madeOutputs } from './job-outputs';
import { ProgressEstimate } from './progress-estimate';
import { publicMessage } from './public-message';
import { sniffMediaType, SNIFF_BYTES } from '../storage/media-type';
import { ProcessingError } from '../processors/processor';
import { isDiskFull } from '../../audio/write-fully';
import { PartUnavailableError } from '../part-unavailable';
import { STORAGE_RETRY_AFTER_S, StorageUnavailableError, type WorkFiles } from '../storage/media-files';
import { MediaEndedError, type MediaRecords } from '../storage/media-records';
import type { MediaFiles } from '../storage/media-files';
import type { MediaRecord } from '../storage/media-record';
import type { WorkerPool } from './worker-pool';

export interface JobOptions {
  /** The data folder: named in no message a caller is told. */
  dataDir: string;
  processingDelayMs: number;
  fetchTimeoutMs: number;
  maxUploadBytes: number;
  /** Where the enhance-json fetch may connect. */
  fetchGuard: FetchGuard;
  /** The engine's error log (causes a caller is told only in general terms). */
  onErrorLine(line: string): void;
  /**
   * With instances sharing the work, when this one has no ffmpeg: a media that needs it is left to
   * another instance (LeftForAnotherInstance) rather than failed FFMPEG_REQUIRED here.
   */
  leaveWhatNeedsFfmpeg?: boolean;
  /**
   * With instances sharing the work: this engine's name, kept in the media it processes, so that a job
   * it takes over from another engine says so (in its progress and the error log).
   */
  engineName?: string;
}

/** How long a finished job keeps trying to write its end while the shared state refuses writes. */
const SHARED_STATE_PATIENCE_MS = 60_000;

/**
 * A run of a job that another engine may take over (the shared queue's lock, cluster/queue-jobs.ts): an
 * engine that stood still past the lock (paused, swapped out) finds on waking that another one runs the
 * job. Such a run writes nothing more: no file of the media, no state, no progress.
 */
export interface JobFence {
  /** Aborted once this run is known to have lost the job (the lock's renewal failed). */
  readonly lost: AbortSignal;
  /** Whether this run still holds the job, asked (and the hold renewed) before each write; rejects while the queue is away. */
  holds(): Promise<boolean>;
}

/** The run lost its job to another engine: it stops here, having written nothing more. */
class JobLost extends Error {}

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
    private readonly files: MediaFiles,
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
    void this.process(record).catch((err: unknown) => {
      if (!(err instanceof StorageUnavailableError) || this.stopping.signal.aborted) return;
      this.options.onErrorLine(`media ${record.uid}: ${err.message}; trying again in ${STORAGE_RETRY_AFTER_S} s`);
      void this.delay(STORAGE_RETRY_AFTER_S * 1000).then(() => {
        if (!this.stopping.signal.aborted) this.start(record);
      });
    });
  }

  /**
   * Runs the media's job here; resolves when it has ended, or stopped because the engine is closing;
   * rejects when the shared state could not be reached (the job is to run again).
   */
  process(record: MediaRecord, fence?: JobFence): Promise<void> {
    const run = this.run(record, fence).finally(() => {
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

  private async run(record: MediaRecord, fence?: JobFence): Promise<void> {
    let work: WorkFiles | undefined;
    /** Before each write: throws JobLost once another engine holds the job (waiting while the shared state is away). */
    const stillHeld = () =>
      this.whileSharedStateAway(async () => {
        if (fence && (fence.lost.aborted || !(await fence.holds()))) throw new JobLost();
      });
    try {
      await stillHeld(); // a run taken over as it started must not clear the files of the one that took it
      work = await this.files.work(record.uid);
      if (record.internal.downloadUrl && !record.internal.input) await this.fetch(record, work, stillHeld);
      else await work.loadInput();
      if (this.stopping.signal.aborted) return;
      if (this.options.leaveWhatNeedsFfmpeg && needsFfmpeg(record.internal.input!, record.internal.settings))
        throw new LeftForAnotherInstance(record.uid);
      const takenOver = this.takeOver(record);
      const { engineName } = this.options;
      await stillHeld();
      await this.records.update(record, {
        enhancement_status: 'PROCESSING',
        ...(engineName ? { internal: { ...record.internal, engine: engineName } } : {}),
      });
      // Said at once: the progress the first engine left (30%) must not stand while the work starts over.
      if (takenOver) this.records.setProgress(record, { percent: 0, seconds_left: null, taken_over: takenOver });
      await this.delay(this.options.processingDelayMs);
      if (this.stopping.signal.aborted) return;
      if (this.faults.failProcessing())
        throw new ProcessingError('PROCESSING_FAILED', 'processing failed (an injected fault)');
      const input = record.internal.input!;
      const estimate = new ProgressEstimate();
      const asked = (record.internal.settings.outputs ?? []).map((output) => output.name);
      const result = await this.pool.run(
        {
          inputPath: work.inputPath,
          outputPath: work.outputPath,
          input,
          settings: record.internal.settings,
          ...(asked.length > 0
            ? { namedOutputPaths: Object.fromEntries(asked.map((name) => [name, work!.namedOutputPath(name)])) }
            : {}),
        },
        (share) => {
          if (record.enhancement_status !== 'PROCESSING' || fence?.lost.aborted) return;
          const progress = { ...estimate.update(share), ...(takenOver && { taken_over: takenOver }) };
          if (!fence) return this.records.setProgress(record, progress);
          // An engine that stood still past the lock learns it lost the job only at its next renewal:
          // each report asks first, so the engine now running the job is the only one whose progress shows.
          void fence.holds().then(
            (held) => held && !fence.lost.aborted && this.records.setProgress(record, progress),
            () => undefined,
          );
        },
      );
      if (this.stopping.signal.aborted) return;
      const outputs = madeOutputs(asked, result);
      // Stored before the state says so: a media COMPLETED has its outputs and report wherever it is read.
      await stillHeld();
      await work.saveOutput();
      for (const { name } of outputs) await work.saveNamedOutput(name);
      if (result.loudness) {
        const { loudness_target, true_peak } = record.internal.settings;
        await this.files.saveLoudnessReport(record.uid, {
          uid: record.uid,
          interval_s: 1,
          target_lufs: loudness_target,
          true_peak_limit_dbtp: true_peak,
          ...result.loudness,
        });
      }
      // Nothing of the run is left once the media says COMPLETED (its disk use is its files alone).
      await work.close();
      // The work is done and stored: while the shared state refuses writes (away, at its memory limit),
      // its end is written again after a pause, rather than the whole work being run again.
      await stillHeld();
      await this.whileSharedStateAway(() =>
        this.records.update(record, {
          enhancement_status: 'COMPLETED',
          enhancement_params: {
            ...record.enhancement_params,
            ...result.params,
            ...(outputs.length > 0 ? { outputs: appliedOutputs(record.file_name, outputs) } : {}),
          },
          internal: {
            ...record.internal,
            output: result.output,
            ...(outputs.length > 0 ? { outputs: outputs.map(({ name, output }) => ({ name, type: output })) } : {}),
          },
        }),
      );
    } catch (err) {
      if (this.stopping.signal.aborted) return; // not a failure of the media: it resumes on restart
      if (err instanceof MediaEndedError) return; // another instance ran it to its end: its result stands
      if (err instanceof JobLost) return this.lostJob(record);
      // The storage or the shared state is away, or the disk is full: not a failure of the media; it stays
      // where it is, its metadata saying why, and starts over once they answer or room is made (start()
      // above, or the shared queue's retry; a restart resumes it too).
      if (isDiskFull(err)) {
        const why = `the data folder's disk is full (${(err as Error).message}); the job is tried again every ${STORAGE_RETRY_AFTER_S} s until there is room`;
        this.waiting(record, why);
        throw new StorageUnavailableError(why);
      }
      if (err instanceof StorageUnavailableError)
        this.waiting(record, `${err.message}; the job is tried again every ${STORAGE_RETRY_AFTER_S} s`);
      if (err instanceof PartUnavailableError) throw err;
      if (err instanceof LeftForAnotherInstance) throw err;
      // Another engine runs the job now: what this run met (its files removed as that run started, say) is
      // no failure of the media. (A queue that cannot tell leaves the failure to be written, as before.)
      if (fence && (fence.lost.aborted || !(await fence.holds().catch(() => true)))) return this.lostJob(record);
      const code = err instanceof ProcessingError ? err.code : 'PROCESSING_FAILED';
      const message = publicMessage(err instanceof Error ? err.message : String(err), this.options.dataDir);
      await this.records
        .update(record, { enhancement_status: 'FAILED', error: { code, message } })
        .catch(() => undefined);
    } finally {
      await work?.close();
    }
  }

  private lostJob(record: MediaRecord): void {
    this.options.onErrorLine(
      `media ${record.uid}: another engine has taken this job over (this engine stood still past the job's lock); this run stops without writing anything more`,
    );
  }

  /**
   * Whether this engine takes `record` over from another one that set it PROCESSING and stopped (its job's
   * lock lapsed): the work starts over here, which the error log tells; undefined when it is this engine's own.
   */
  private takeOver(record: MediaRecord): MediaProgress['taken_over'] {
    const { engineName } = this.options;
    const before = record.internal.engine;
    if (!engineName || record.enhancement_status !== 'PROCESSING' || !before || before === engineName) return undefined;
    const percent = record.progress?.percent ?? null;
    this.options.onErrorLine(
      `media ${record.uid}: taken over from engine ${before}, which stopped ${percent === null ? 'before telling its progress' : `at ${percent}%`} (its job's lock lapsed); the work starts over on this engine (${engineName})`,
    );
    return { percent_before: percent };
  }

  /** A PROCESSING media's metadata says why its work stands still, and that no time left can be told. */
  private waiting(record: MediaRecord, why: string): void {
    if (record.enhancement_status !== 'PROCESSING') return;
    const reason = publicMessage(why, this.options.dataDir);
    this.records.setProgress(record, { percent: record.progress?.percent ?? 0, seconds_left: null, waiting: reason });
  }

  private async fetch(record: MediaRecord, work: WorkFiles, stillHeld: () => Promise<void>): Promise<void> {
    const path = work.inputPath;
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
    await stillHeld();
    await work.saveInput();
    await this.records.update(record, { internal: { ...record.internal, input: type } });
  }

  /**
   * Runs `write` again while the shared state answers 503 (Redis away or full), after pauses growing
   * from 0.5 s to 5 s, for at most SHARED_STATE_PATIENCE_MS; then its 503 is the job's (run again later).
   */
  private async whileSharedStateAway(write: () => Promise<void>): Promise<void> {
    const giveUpAt = Date.now() + SHARED_STATE_PATIENCE_MS;
    for (let pause = 500; ; pause = Math.min(pause * 2, 5_000)) {
      try {
        return await write();
      } catch (err) {
        const away = err instanceof PartUnavailableError;
        if (!away || Date.now() + pause > giveUpAt || this.stopping.signal.aborted) throw err;
      }
      await this.delay(pause);
    }
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
