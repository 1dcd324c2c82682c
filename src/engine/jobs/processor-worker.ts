// Runs in a worker thread: loads the processor module once, then processes one job per message, or a
// part of another thread's job (a task) that the pool lent this thread for.
import { parentPort, workerData } from 'node:worker_threads';
import { configureChildRuns } from '../../audio/child-runs';
import { endThisThread } from '../../enhance/thread-end';
import type { ProcessContext, Processor, ThreadHelp } from '../processors/processor';
import type { FromWorker, ToWorker } from './worker-messages';

const { processorModule, context } = workerData as { processorModule: string; context: ProcessContext };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the module is named at run time, and loads before the first message
const processor = require(processorModule) as Processor;
const port = parentPort!;

/** Tasks this thread asked the pool to run elsewhere, by request id. */
const lent = new Map<number, { resolve(result: unknown): void; reject(err: unknown): void }>();
let nextRequest = 1;

function post(message: FromWorker): void {
  port.postMessage(message);
}

// The main thread ends this thread's programs when the engine closes: a thread being terminated cannot.
configureChildRuns({
  ...(context.ffmpegStallMs !== undefined ? { stallMs: context.ffmpegStallMs } : {}),
  onChild: (pid, running) => post({ type: 'child', pid, running }),
});

function describeError(err: unknown): { code: string; message: string } {
  const e = err as { code?: unknown; message?: unknown };
  return {
    code: typeof e?.code === 'string' ? e.code : 'PROCESSING_FAILED',
    message: typeof e?.message === 'string' ? e.message : String(err),
  };
}

// A job's or a task's failure is posted back as its answer, so nothing waits on the promise this returns.
async function onMessage(message: ToWorker): Promise<void> {
  if (message.type === 'end-thread') return endThisThread();
  if (message.type === 'job') {
    const help: ThreadHelp = {
      threads: message.threads,
      runElsewhere: (task) =>
        new Promise((resolve, reject) => {
          const requestId = nextRequest++;
          lent.set(requestId, { resolve, reject });
          post({ type: 'lend', requestId, task });
        }),
      progress: (share) => post({ type: 'job-progress', id: message.id, share }),
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
}

port.on('message', (message: ToWorker) => void onMessage(message));
