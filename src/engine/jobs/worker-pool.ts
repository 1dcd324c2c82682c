import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { endThread } from '../../enhance/thread-end';
import type { ProcessContext, ProcessJob, ProcessResult } from '../processors/processor';
import { ProcessingError } from '../processors/processor';
import type { FromWorker, ToWorker, WorkerError } from './worker-messages';

interface Pending {
  id: number;
  job: ProcessJob;
  onProgress?: (share: number) => void;
  resolve(result: ProcessResult): void;
  reject(err: unknown): void;
}

/** A thread lent to another thread's job: the answer goes back to `to`. */
interface Loan {
  to: Slot;
  requestId: number;
}

interface Slot {
  worker: Worker;
  busy?: Pending;
  loan?: Loan;
  /** The programs (ffmpeg, ffprobe) the thread is running now. */
  children: Set<number>;
  /** Ends the thread when it has had nothing to do for the pool's idle time. */
  idle?: NodeJS.Timeout;
}

export interface WorkerPoolOptions {
  /**
   * A thread with nothing to do for this long (ms) ends, and the memory it holds goes back to the system
   * (WebAssembly memory never shrinks while its thread lives); the next job starts a fresh one. 0: never.
   */
  idleMs?: number;
}

/** Every pool's threads, whose programs are killed however the process ends (an exit without close too). */
const liveSlots = new Set<Slot>();
process.once('exit', () => liveSlots.forEach(killChildren));

/**
 * A bounded pool of worker threads running the processor module, so processing never blocks the
 * server. Jobs beyond the pool's size wait in order. A thread with nothing to do can be lent to a
 * running job for a part of it (a file's channels), but never while a job waits. A worker that dies
 * is replaced; one idle for `idleMs` ends, and is started again when needed.
 */
export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly processorModule: string,
    private readonly context: ProcessContext,
    private readonly options: WorkerPoolOptions = {},
  ) {}

  /** Threads alive now (busy, lent or idle). */
  get threads(): number {
    return this.slots.length;
  }

  /** Runs a job when a thread is free; `onProgress` hears the share of it done (0 to 1) as the processor tells it. */
  run(job: ProcessJob, onProgress?: (share: number) => void): Promise<ProcessResult> {
    if (this.closed) return Promise.reject(new ProcessingError('ENGINE_STOPPED', 'the engine is stopping'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, job, onProgress, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const stopping = new ProcessingError('ENGINE_STOPPED', 'the engine is stopping');
    for (const pending of this.queue.splice(0)) pending.reject(stopping);
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        clearTimeout(slot.idle);
        slot.busy?.reject(stopping);
        killChildren(slot);
        return endThread(slot.worker);
      }),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.freeSlot();
      if (!slot) return;
      const pending = this.queue.shift()!;
      slot.busy = pending;
      // What the pool could lend this job now: the threads nobody uses, if no other job waits.
      const idle = this.queue.length > 0 ? 0 : this.size - this.slots.filter((s) => s.busy || s.loan).length;
      post(slot, { type: 'job', id: pending.id, job: pending.job, threads: 1 + idle });
    }
    this.watchIdle();
  }

  /** Free threads start their idle time (once); busy or lent ones stop it. */
  private watchIdle(): void {
    const idleMs = this.options.idleMs ?? 0;
    for (const slot of this.slots) {
      if (slot.busy || slot.loan || this.closed) {
        clearTimeout(slot.idle);
        slot.idle = undefined;
      } else if (!slot.idle && idleMs > 0) {
        slot.idle = setTimeout(() => this.retire(slot), idleMs).unref();
      }
    }
  }

  /** Ends a thread that stayed idle: out of the pool first, so its exit is no failure. */
  private retire(slot: Slot): void {
    slot.idle = undefined;
    const index = this.slots.indexOf(slot);
    if (slot.busy || slot.loan || index < 0) return;
    this.slots.splice(index, 1);
    void endThread(slot.worker);
  }

  private freeSlot(): Slot | undefined {
    const slot = this.slots.find((s) => !s.busy && !s.loan);
    if (slot || this.slots.length >= this.size) return slot;
    return this.spawn();
  }

  /** A job asks for a thread for one of its parts: lend one that is free, or say there is none. */
  private lend(to: Slot, requestId: number, task: unknown): void {
    const slot = this.closed || this.queue.length > 0 ? undefined : this.freeSlot();
    if (!slot) return post(to, { type: 'lent', requestId });
    slot.loan = { to, requestId };
    this.watchIdle();
    post(slot, { type: 'task', task });
  }

  private returnLoan(slot: Slot, answer: { result?: unknown; error?: WorkerError }): void {
    const loan = slot.loan;
    slot.loan = undefined;
    if (loan && this.slots.includes(loan.to)) post(loan.to, { type: 'lent', requestId: loan.requestId, ...answer });
    this.dispatch();
  }

  private spawn(): Slot {
    const worker = new Worker(join(__dirname, 'processor-worker.js'), {
      workerData: { processorModule: this.processorModule, context: this.context },
    });
    const slot: Slot = { worker, children: new Set() };
    liveSlots.add(slot);
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'child') return void slot.children[message.running ? 'add' : 'delete'](message.pid);
      if (message.type === 'lend') return this.lend(slot, message.requestId, message.task);
      if (message.type === 'task-done') return this.returnLoan(slot, message);
      const pending = slot.busy;
      if (!pending || pending.id !== message.id) return;
      if (message.type === 'job-progress') return pending.onProgress?.(message.share);
      slot.busy = undefined;
      if (message.error) pending.reject(new ProcessingError(message.error.code, message.error.message));
      else pending.resolve(message.result!);
      this.dispatch();
    });
    worker.on('error', (err) => {
      slot.busy?.reject(new ProcessingError('PROCESSING_FAILED', `the processor crashed: ${err.message}`));
      slot.busy = undefined;
    });
    worker.on('exit', () => {
      clearTimeout(slot.idle);
      killChildren(slot);
      liveSlots.delete(slot);
      const index = this.slots.indexOf(slot);
      if (index >= 0) this.slots.splice(index, 1);
      slot.busy?.reject(new ProcessingError('PROCESSING_FAILED', 'the processor stopped unexpectedly'));
      slot.busy = undefined;
      if (slot.loan)
        this.returnLoan(slot, {
          error: { code: 'PROCESSING_FAILED', message: 'the thread running part of this job stopped unexpectedly' },
        });
      if (!this.closed) this.dispatch();
    });
    this.slots.push(slot);
    return slot;
  }
}

/** Ends what a thread left running (SIGKILL: ffmpeg may ignore SIGTERM); a pid already gone is no error. */
function killChildren(slot: Slot): void {
  for (const pid of slot.children) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // it ended by itself meanwhile
    }
  }
  slot.children.clear();
}

function post(slot: Slot, message: ToWorker): void {
  slot.worker.postMessage(message);
}
