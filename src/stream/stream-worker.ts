// Runs in a stream thread: keeps the state of each live stream given to it and enhances its chunks in
// the order they came, one stream's after another's as they arrive, so the node's thread never waits.
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { endThisThread } from '../enhance/thread-end';
import { LiveStream } from './live-stream';
import { enhanceChunk } from './chunk-work';
import type { FromStreamWorker, StreamOpen, ToStreamWorker } from './stream-messages';

const port = parentPort!;

interface Open {
  opening: StreamOpen;
  /** The stream, made at its first chunk; its chunks run one after another on this chain. */
  live?: Promise<LiveStream>;
  chain: Promise<void>;
}

const streams = new Map<number, Open>();

function post(message: FromStreamWorker, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

port.on('message', (message: ToStreamWorker) => {
  if (message.type === 'end-thread') return void endThisThread();
  if (message.type === 'open') {
    streams.set(message.stream, { opening: message, chain: Promise.resolve() });
    return;
  }
  const open = streams.get(message.stream);
  if (message.type === 'close') {
    if (!open) return;
    streams.delete(message.stream);
    void open.chain.then(async () => (await open.live?.catch(() => undefined))?.destroy());
    return;
  }
  if (!open) return post({ type: 'done', id: message.id, error: 'the stream is not open on this thread' });
  open.chain = open.chain.then(async () => {
    const started = performance.now();
    try {
      const { format, model, level } = open.opening;
      open.live ??= LiveStream.create({ rate: format.rate, channels: format.channels, model, level });
      const live = await open.live;
      const bytes = await enhanceChunk(live, new Uint8Array(message.bytes), format, message.end);
      const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
      if (message.end) {
        streams.delete(message.stream);
        live.destroy();
      }
      post(
        { type: 'done', id: message.id, bytes: buffer, latency: live.latency, busyMs: performance.now() - started },
        [buffer],
      );
    } catch (err) {
      post({ type: 'done', id: message.id, error: (err as Error)?.message ?? String(err) });
    }
  });
});
