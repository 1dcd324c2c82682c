// Runs in a worker thread: loads the processor module once, then processes one job per message.
import { parentPort, workerData } from 'node:worker_threads';
import type { ProcessContext, Processor, ProcessJob } from './processor';

const processor = require(workerData.processorModule as string) as Processor;
const context = workerData.context as ProcessContext;

parentPort!.on('message', async (message: { id: number; job: ProcessJob }) => {
  try {
    const result = await processor.processMedia(message.job, context);
    parentPort!.postMessage({ id: message.id, result });
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    parentPort!.postMessage({
      id: message.id,
      error: { code: typeof e?.code === 'string' ? e.code : 'PROCESSING_FAILED', message: typeof e?.message === 'string' ? e.message : String(err) },
    });
  }
});
