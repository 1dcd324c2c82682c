// DNSMOS on a thread of its own: the benchmark hands it each output and goes on running the chain and the
// reference-based measures, so the network's inference (most of the benchmark's time) overlaps the rest.
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import type { DnsmosScores } from './dnsmos';

interface Request {
  id: number;
  samples: Float32Array;
  sampleRate: number;
}
type Reply = { id: number; scores: DnsmosScores } | { id: number; error: string };

export class DnsmosThread {
  private readonly worker = new Worker(__filename);
  private readonly waiting = new Map<number, { resolve: (s: DnsmosScores) => void; reject: (e: Error) => void }>();
  private next = 0;

  constructor() {
    this.worker.on('message', (reply: Reply) => {
      const waiter = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if ('error' in reply) waiter?.reject(new Error(reply.error));
      else waiter?.resolve(reply.scores);
    });
    this.worker.on('error', (err) => this.failAll(err));
    this.worker.on('exit', (code) => this.failAll(new Error(`the DNSMOS thread ended (exit code ${code})`)));
  }

  /** The clip's DNSMOS ratings, scored on the thread in the order asked. */
  score(samples: Float32Array, sampleRate: number): Promise<DnsmosScores> {
    const id = this.next++;
    const request: Request = { id, samples, sampleRate };
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage(request);
    });
  }

  async close(): Promise<void> {
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }

  private failAll(err: Error): void {
    for (const waiter of this.waiting.values()) waiter.reject(err);
    this.waiting.clear();
  }
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  // Loaded here only: onnxruntime-web in the main thread would keep the 'cpu' backend there, and the
  // chain's DeepFilterNet3 would then run on WebAssembly, not on the native runtime (onnx-runtimes.ts).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- this thread's module only
  const { Dnsmos } = require('./dnsmos') as typeof import('./dnsmos');
  const loaded = Dnsmos.load();
  // One request at a time, in order: the session is not shared between concurrent runs.
  let queue = Promise.resolve();
  port.on('message', (request: Request) => {
    queue = queue.then(async () => {
      try {
        const scores = await (await loaded).score(request.samples, request.sampleRate);
        port.postMessage({ id: request.id, scores } satisfies Reply);
      } catch (err) {
        port.postMessage({ id: request.id, error: (err as Error).message } satisfies Reply);
      }
    });
  });
}
