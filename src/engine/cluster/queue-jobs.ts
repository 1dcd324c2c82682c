// The jobs of instances sharing the work, on BullMQ: an upload on any instance adds a job named by the
// media's uid; every instance's worker takes jobs, as many at once as it has worker threads, and runs
// them as one process does (jobs/jobs.ts). An instance that dies mid-job stops renewing the job's lock:
// once it lapses, BullMQ's stalled-job check gives the job to another instance. One that only stood still
// past the lock learns it lost the job before it writes again (JobFence), and stops.
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import type Redis from 'ioredis';
import { LeftForAnotherInstance } from '../jobs/ffmpeg-need';
import type { JobFence, JobStarter, Jobs } from '../jobs/jobs';
import type { MediaRecords } from '../storage/media-records';
import type { MediaRecord } from '../storage/media-record';
import { isFinished } from '../storage/disk-use';
import { StateLog } from '../state-log';
import { KEY_PREFIX, queueConnection, shared } from './redis-connection';

const QUEUE = 'media';
/** BullMQ's keys apart from the records' (its job keys are named by the uid too). */
const QUEUE_PREFIX = `${KEY_PREFIX}:queue`;
/** How long a job this instance cannot run waits before any instance may take it again. */
const LEFT_JOB_DELAY_MS = 2_000;

export interface QueueOptions {
  url: string;
  /** Jobs this instance runs at once: its worker threads. */
  concurrency: number;
  /** How long a job's lock holds without renewal: how soon another instance takes up a dead one's job. */
  lockDurationMs: number;
}

interface MediaJob {
  uid: string;
}

export class QueueJobs implements JobStarter {
  private readonly queue: Queue<MediaJob>;
  private readonly worker: Worker<MediaJob>;
  private readonly connections: Redis[] = [];
  /** The runs under way here, by job id: each told when its lock's renewal fails (another instance may hold it now). */
  private readonly runs = new Map<string, AbortController>();

  constructor(
    /** The connection the records use: adding a job fails at once while Redis is away, as they do. */
    private readonly commands: Redis,
    private readonly records: MediaRecords,
    private readonly jobs: Jobs,
    private readonly options: QueueOptions,
    onError: (line: string) => void,
  ) {
    this.queue = new Queue<MediaJob>(QUEUE, { connection: commands, prefix: QUEUE_PREFIX });
    this.queue.on('error', () => undefined);
    const workerConnection = queueConnection(options.url);
    this.connections.push(workerConnection);
    this.worker = new Worker<MediaJob>(QUEUE, (job, token) => this.run(job, token), {
      connection: workerConnection,
      prefix: QUEUE_PREFIX,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.lockDurationMs,
      // A job taken up again after its instance died is not a failure of the media: it may happen often.
      maxStalledCount: 1000,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    });
    // Lost connections come back by themselves; anything else is for the error log, once while it lasts
    // (Redis at its memory limit refuses every write of the queue's loop until memory is freed).
    const told = new StateLog(onError, 'job queue');
    this.worker.on('error', (err) => {
      if (workerConnection.status === 'ready') told.failed(err.message);
    });
    this.worker.on('active', () => told.ok());
    this.worker.on('lockRenewalFailed', (jobIds: string[]) => {
      for (const id of jobIds) this.runs.get(id)?.abort();
    });
  }

  /** Adds the media's job (its uid names it, so adding it twice is one job). */
  async start(record: MediaRecord): Promise<void> {
    await shared(this.commands, () => this.queue.add(QUEUE, { uid: record.uid }, jobOptions(record.uid)));
  }

  /**
   * Adds the job of every media still PENDING or PROCESSING whose job is not in the queue: one accepted
   * while the queue could not be reached for a moment. Run by the instance whose turn it is (retention).
   */
  async requeueUnfinished(): Promise<void> {
    for (const record of await this.records.all()) if (!isFinished(record.enhancement_status)) await this.start(record);
  }

  /**
   * Stops taking jobs without waiting for those under way: they stop here (Jobs.close) and, their lock
   * no longer renewed, another instance (or this one's next start) takes them up.
   */
  async close(): Promise<void> {
    await this.worker.close(true).catch(() => undefined);
    await this.jobs.close();
    await this.queue.close().catch(() => undefined);
    for (const connection of this.connections) connection.disconnect();
  }

  private async run(job: Job<MediaJob>, token?: string): Promise<void> {
    // The worker always gives its lock's token; without one no write could ever be fenced, and the job
    // would be handed on for ever instead of failing where it can be seen.
    if (token === undefined) throw new Error(`job ${job.id} came without its lock token: it cannot be fenced`);
    const record = await this.records.get(job.data.uid);
    if (!record || isFinished(record.enhancement_status)) return; // removed, or ended by an earlier run
    const lost = new AbortController();
    const id = job.id!;
    this.runs.set(id, lost);
    // Before each write the run asks whether it still holds the job, renewing its lock as it does: an
    // instance that stood still past the lock (paused, swapped out) finds another one running the job.
    const fence: JobFence = {
      lost: lost.signal,
      holds: async () => (await shared(this.commands, () => job.extendLock(token, this.options.lockDurationMs))) === 1,
    };
    try {
      await this.jobs.process(record, fence);
    } catch (err) {
      if (!(err instanceof LeftForAnotherInstance)) throw err;
      // Back in the queue a moment later, for any instance (not an attempt of the media's: it never fails for this).
      await job.moveToDelayed(Date.now() + LEFT_JOB_DELAY_MS, token);
      throw new DelayedError();
    } finally {
      if (this.runs.get(id) === lost) this.runs.delete(id);
    }
    // Stopped by this instance's close, not ended: failing the job hands it on at once (a retry).
    if (this.jobs.closing) throw new Error('the instance stopped; the job goes on elsewhere');
  }
}

function jobOptions(uid: string) {
  return {
    jobId: uid,
    attempts: 1000,
    backoff: { type: 'fixed', delay: 1000 },
    removeOnComplete: true,
    removeOnFail: true,
  };
}
