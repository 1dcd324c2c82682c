// The worker threads a node's live streams run on: each stream lives on one thread, which keeps its
// state and answers its chunks in order; a new stream goes to the thread with the fewest, and a thread
// is started only when every one has a stream and the bound allows another. Closing ends every thread:
// no answer comes after it.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { endThread } from '../enhance/thread-end';
import type { StreamModel } from './live-stream';
import type { PcmFormat } from './pcm-format';
import type { FromStreamWorker, ToStreamWorker } from './stream-messages';

export interface ChunkResult {
  bytes: Buffer;
  /** The stream's latency in samples at its rate. */
  latency: number;
  /** The thread's time spent on the chunk (its share of its group's), in ms. */
  busyMs: number;
  /** Audio of the group it ran in, in ms. */
  groupMs: number;
  /** Times the stream's state started afresh because its output turned non-finite. */
  resets: number;
  /** Bytes the stream's state holds on its thread. */
  memoryBytes: number;
  /** Streams its thread holds now. */
  threadStreams: number;
}

interface Pending {
  resolve(result: ChunkResult): void;
  reject(err: Error): void;
}

interface Thread {
  /** Unique among this node's threads, for as long as the node runs. */
  id: number;
  worker: Worker;
  streams: Set<number>;
  pending: Map<number, Pending>;
}

/** A stream open on one of the threads. */
export interface ThreadStream {
  readonly id: number;
  /** The thread it runs on (Thread.id). */
  readonly thread: number;
  /** Enhances one chunk (raw PCM in the stream's format); `end` closes the stream after it. */
  chunk(bytes: Buffer, end: boolean): Promise<ChunkResult>;
  /** Drops the stream's state; chunks already sent are still answered. */
  close(): void;
}

/** One thread less than the machine has cores, so Node-RED's own keeps one; at least one. */
export function defaultThreadCount(): number {
  return Math.max(1, availableParallelism() - 1);
}

export class StreamThreads {
  private readonly threads: Thread[] = [];
  private nextStream = 1;
  private nextChunk = 1;
  private nextThread = 1;
  private closed = false;

  constructor(private readonly maxThreads = defaultThreadCount()) {}

  open(format: PcmFormat, model: StreamModel, level: number): ThreadStream {
    if (this.closed) throw new Error('the node is closing');
    const thread = this.pick();
    const stream = this.nextStream++;
    thread.streams.add(stream);
    post(thread, { type: 'open', stream, format, model, level });
    let open = true;
    return {
      id: stream,
      thread: thread.id,
      chunk: (bytes, end) => {
        if (!open) return Promise.reject(new Error('the stream is closed'));
        // A thread that failed took its streams with it.
        if (!this.threads.includes(thread)) return Promise.reject(new Error('the stream thread stopped'));
        if (end) {
          open = false;
          thread.streams.delete(stream);
        }
        return this.send(thread, stream, bytes, end);
      },
      close: () => {
        if (!open) return;
        open = false;
        thread.streams.delete(stream);
        if (!this.closed) post(thread, { type: 'close', stream });
      },
    };
  }

  /** The thread the next stream opened would run on; undefined when it would start a new one. */
  threadForNext(): number | undefined {
    return this.least()?.id;
  }

  /** Threads running now. */
  get size(): number {
    return this.threads.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    const threads = this.threads.splice(0);
    for (const thread of threads) thread.pending.clear();
    await Promise.all(threads.map((thread) => endThread(thread.worker)));
  }

  private send(thread: Thread, stream: number, bytes: Buffer, end: boolean): Promise<ChunkResult> {
    if (this.closed) return Promise.reject(new Error('the node is closing'));
    const id = this.nextChunk++;
    // The bytes are copied out of the message's Buffer, which the flow may still hold, and moved over.
    const copy = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      post(thread, { type: 'chunk', stream, id, bytes: copy, end }, [copy]);
    });
  }

  private pick(): Thread {
    return this.least() ?? this.spawn();
  }

  /** The running thread with the fewest streams, if a new stream goes to it rather than to a new thread. */
  private least(): Thread | undefined {
    const least = this.threads.reduce<Thread | undefined>(
      (best, thread) => (!best || thread.streams.size < best.streams.size ? thread : best),
      undefined,
    );
    return least && (least.streams.size === 0 || this.threads.length >= this.maxThreads) ? least : undefined;
  }

  private spawn(): Thread {
    const worker = new Worker(join(__dirname, 'stream-worker.js'));
    const thread: Thread = { id: this.nextThread++, worker, streams: new Set(), pending: new Map() };
    worker.on('message', (message: FromStreamWorker) => {
      const pending = thread.pending.get(message.id);
      if (!pending) return;
      thread.pending.delete(message.id);
      if (message.error !== undefined || !message.bytes) pending.reject(new Error(message.error));
      else
        pending.resolve({
          bytes: Buffer.from(message.bytes),
          latency: message.latency ?? 0,
          busyMs: message.busyMs ?? 0,
          groupMs: message.groupMs ?? 0,
          resets: message.resets ?? 0,
          memoryBytes: message.memoryBytes ?? 0,
          threadStreams: message.threadStreams ?? 0,
        });
    });
    const fail = (reason: string) => {
      const index = this.threads.indexOf(thread);
      if (index >= 0) this.threads.splice(index, 1);
      for (const pending of thread.pending.values()) pending.reject(new Error(reason));
      thread.pending.clear();
      thread.streams.clear();
    };
    worker.on('error', (err) => fail(`the stream thread failed: ${err.message}`));
    worker.on('exit', () => fail('the stream thread stopped unexpectedly'));
    // A thread waiting for chunks does not keep Node-RED from exiting.
    worker.unref();
    this.threads.push(thread);
    return thread;
  }
}

function post(thread: Thread, message: ToStreamWorker, transfer: ArrayBuffer[] = []): void {
  thread.worker.postMessage(message, transfer);
}
