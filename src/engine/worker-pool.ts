import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ProcessContext, ProcessJob, ProcessResult } from './processor';
import { ProcessingError } from './processor';

interface Pending {
  id: number;
  job: ProcessJob;
  resolve(result: ProcessResult): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  busy?: Pending;
}

/**
 * A bounded pool of worker threads running the processor module, so processing never blocks the
 * server. Jobs beyond the pool's size wait in order. A worker that dies is replaced.
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
  ) {}

  run(job: ProcessJob): Promise<ProcessResult> {
    if (this.closed) return Promise.reject(new ProcessingError('ENGINE_STOPPED', 'the engine is stopping'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, job, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const stopping = new ProcessingError('ENGINE_STOPPED', 'the engine is stopping');
    for (const pending of this.queue.splice(0)) pending.reject(stopping);
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        slot.busy?.reject(stopping);
        return slot.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.busy);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const pending = this.queue.shift()!;
      slot.busy = pending;
      slot.worker.postMessage({ id: pending.id, job: pending.job });
    }
  }

  private spawn(): Slot {
    const worker = new Worker(join(__dirname, 'processor-worker.js'), { workerData: { processorModule: this.processorModule, context: this.context } });
    const slot: Slot = { worker };
    worker.on('message', (message: { id: number; result?: ProcessResult; error?: { code: string; message: string } }) => {
      const pending = slot.busy;
      if (!pending || pending.id !== message.id) return;
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
      const index = this.slots.indexOf(slot);
      if (index >= 0) this.slots.splice(index, 1);
      slot.busy?.reject(new ProcessingError('PROCESSING_FAILED', 'the processor stopped unexpectedly'));
      slot.busy = undefined;
      if (!this.closed) this.dispatch();
    });
    this.slots.push(slot);
    return slot;
  }
}
