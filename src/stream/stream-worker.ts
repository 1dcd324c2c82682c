// Runs in a stream thread: keeps the state of each live stream given to it and enhances its chunks in
// the order they came, one stream's after another's as they arrive, so the node's thread never waits.
// A stream's chunks that wait together (a burst) run as one push of up to GROUP_MS: the same output as
// one by one, for less work. A stream ends with its last chunk, its close, or its first failure; at a
// close, the chunks already sent to it still run, then its state is dropped.
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { endThisThread } from '../enhance/thread-end';
import { LiveStream, type StreamModel } from './live-stream';
import { enhanceChunks } from './chunk-work';
import { bytesPerFrame } from './pcm-format';
import type { FromStreamWorker, StreamChunk, StreamOpen, ToStreamWorker } from './stream-messages';
import { GROUP_MS } from './wait-estimate';

const port = parentPort!;

interface Open {
  opening: StreamOpen;
  /** The stream, made at its first chunk. */
  live?: LiveStream;
  /** Chunks come, not started yet. */
  waiting: StreamChunk[];
  running: boolean;
  /** Closed by the node: the chunks already sent still run, then the state is dropped. */
  closing: boolean;
}

const streams = new Map<number, Open>();
/** Models this thread has loaded: a stream's start after that is work, the first is the model's loading. */
const loaded = new Set<StreamModel>();

function post(message: FromStreamWorker, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

port.on('message', (message: ToStreamWorker) => {
  if (message.type === 'end-thread') return void endThisThread();
  if (message.type === 'open') {
    streams.set(message.stream, { opening: message, waiting: [], running: false, closing: false });
    return;
  }
  const open = streams.get(message.stream);
  if (message.type === 'close') {
    if (!open) return;
    open.closing = true;
    if (!open.running) drop(message.stream, open);
    return;
  }
  if (!open) return post({ type: 'done', id: message.id, error: 'the stream is not open on this thread' });
  open.waiting.push(message);
  if (!open.running) {
    open.running = true;
    // After the messages already come: a burst's chunks join the first group.
    setImmediate(() => void run(message.stream, open));
  }
});

/** Runs the stream's waiting chunks, a group at a time, letting other streams' work in between. */
async function run(id: number, open: Open): Promise<void> {
  while (open.waiting.length > 0 && streams.get(id) === open) {
    await runGroup(id, open, takeGroup(open));
    await new Promise((resolve) => setImmediate(resolve));
  }
  open.running = false;
  if (open.closing) drop(id, open);
}

/** The first waiting chunks, up to GROUP_MS of audio (at least one), ending at the stream's last. */
function takeGroup(open: Open): StreamChunk[] {
  const { format } = open.opening;
  const limit = (GROUP_MS / 1000) * format.rate * bytesPerFrame(format);
  let bytes = 0;
  let count = 0;
  while (count < open.waiting.length) {
    const chunk = open.waiting[count];
    if (count > 0 && bytes + chunk.bytes.byteLength > limit) break;
    bytes += chunk.bytes.byteLength;
    count++;
    if (chunk.end) break;
  }
  return open.waiting.splice(0, count);
}

async function runGroup(id: number, open: Open, group: StreamChunk[]): Promise<void> {
  const { format, model, level } = open.opening;
  const started = performance.now();
  let loadingMs = 0;
  const end = group[group.length - 1].end;
  try {
    if (!open.live) {
      const before = performance.now();
      const cold = !loaded.has(model);
      open.live = await LiveStream.create({ rate: format.rate, channels: format.channels, model, level });
      loaded.add(model);
      if (cold) loadingMs = performance.now() - before;
    }
    const live = open.live;
    const outputs = await enhanceChunks(
      live,
      group.map((chunk) => new Uint8Array(chunk.bytes)),
      format,
      end,
    );
    const busyMs = performance.now() - started - loadingMs;
    const memoryBytes = live.memoryBytes();
    if (end) drop(id, open);
    const frame = bytesPerFrame(format);
    const groupFrames = group.reduce((sum, chunk) => sum + chunk.bytes.byteLength / frame, 0);
    group.forEach((chunk, i) => {
      const bytes = outputs[i];
      const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
      const share = groupFrames === 0 ? 1 / group.length : chunk.bytes.byteLength / frame / groupFrames;
      post(
        {
          type: 'done',
          id: chunk.id,
          bytes: buffer,
          latency: live.latency,
          busyMs: busyMs * share,
          groupMs: (groupFrames / format.rate) * 1000,
          resets: live.resets,
          memoryBytes,
          threadStreams: streams.size,
        },
        [buffer],
      );
    });
  } catch (err) {
    // The stream cannot go on: its state is dropped, and its chunks still here fail with it.
    const reason = (err as Error)?.message ?? String(err);
    for (const chunk of [...group, ...open.waiting.splice(0)]) post({ type: 'done', id: chunk.id, error: reason });
    drop(id, open);
  }
}

/** Forgets the stream and frees its state. */
function drop(id: number, open: Open): void {
  if (streams.get(id) === open) streams.delete(id);
  open.live?.destroy();
  open.live = undefined;
}
