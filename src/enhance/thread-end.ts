// Ending a worker thread that may run the network. onnxruntime-node runs a session on a thread of its
// own and calls back into the JavaScript thread that asked: a thread terminated while such a run is in
// flight leaves the runtime calling into an environment that is gone, and that aborts the whole process
// (Node-RED with it). So such a thread is asked to end itself: it starts no further run, waits for the
// one in flight, releases its sessions and exits. Only a thread that does not answer in time, busy in
// code of its own (WebAssembly, which has no such callback), is terminated from outside.
import type { Worker } from 'node:worker_threads';
import { endDfnRuns } from './dfn-model';

/** What a thread is sent to end itself. */
export interface EndThread {
  type: 'end-thread';
}

/** How long a thread has to end itself before it is terminated. */
const END_GRACE_MS = 2_000;

/** Asks `worker` to end itself once its network runs have returned, and resolves when it has ended. */
export async function endThread(worker: Worker, graceMs = END_GRACE_MS): Promise<void> {
  if (worker.threadId < 0) return; // already ended
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.postMessage({ type: 'end-thread' } satisfies EndThread);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => void worker.terminate().then(() => resolve()), graceMs);
  });
  await Promise.race([exited, late]);
  clearTimeout(timer);
}

/** In the thread: ends it once the network's run in flight has returned. */
export async function endThisThread(): Promise<void> {
  await endDfnRuns().catch(() => undefined);
  process.exit(0); // in a worker thread, this ends the thread only
}
