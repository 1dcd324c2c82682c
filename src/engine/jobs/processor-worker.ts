// Runs in a worker thread: loads the processor module once, then processes one job per message, or a
// part of another thread's job (a task) that the pool lent this thread for.
import { parentPort, workerData } from 'node:worker_threads';
import type { ProcessContext, Processor, ThreadHelp } from '../processors/processor';
import type { FromWorker, ToWorker } from './worker-messages';

const processor = require(workerData.processorModule as string) as Processor;
const context = workerData.context as ProcessContext;
const port = parentPort!;

/** Tasks this thread asked the pool to run elsewhere, by request id. */
const lent = new Map<number, { resolve(result: unknown): void; reject(err: unknown): void }>();
let nextRequest = 1;

function post(message: FromWorker): void {
  port.postMessage(message);
}

function describeError(err: unknown): { code: string; message: string } {
  const e = err as { code?: unknown; message?: unknown };
  return {
    code: typeof e?.code === 'string' ? e.code : 'PROCESSING_FAILED',
    message: typeof e?.message === 'string' ? e.message : String(err),
  };
}

port.on('message', async (message: ToWorker) => {
  if (message.type === 'job') {
    const help: ThreadHelp = {
      threads: message.threads,
      runElsewhere: (task) =>
        new Promise((resolve, reject) => {
          const requestId = nextRequest++;
          lent.set(requestId, { resolve, reject });
          post({ type: 'lend', requestId, task });
        }),
    };
    try {
      post({ type: 'job-done', id: message.id, result: await processor.processMedia(message.job, context, help) });
    } catch (err) {
      post({ type: 'job-done', id: message.id, error: describeError(err) });
    }
  } else if (message.type === 'task') {
    try {
      if (!processor.runTask) throw new Error('this processor runs no tasks');
      post({ type: 'task-done', result: await processor.runTask(message.task) });
    } catch (err) {
      post({ type: 'task-done', error: describeError(err) });
    }
  } else {
    const request = lent.get(message.requestId);
    lent.delete(message.requestId);
    if (message.error) request?.reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
    else request?.resolve(message.result);
  }
});
