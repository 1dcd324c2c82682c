// What the node's thread and a stream thread say to each other (stream-threads.ts, stream-worker.ts).
import type { EndThread } from '../enhance/thread-end';
import type { PcmFormat } from './pcm-format';
import type { StreamModel } from './live-stream';

export interface StreamOpen {
  type: 'open';
  stream: number;
  format: PcmFormat;
  model: StreamModel;
  level: number;
}

export interface StreamChunk {
  type: 'chunk';
  stream: number;
  /** Answers come back under this id. */
  id: number;
  /** Raw PCM in the stream's format, a whole number of frames (checked before it is sent). */
  bytes: ArrayBuffer;
  /** The last chunk: its output carries the held tail, and the stream closes. */
  end: boolean;
}

export interface StreamClose {
  type: 'close';
  stream: number;
}

export type ToStreamWorker = StreamOpen | StreamChunk | StreamClose | EndThread;

export interface ChunkDone {
  type: 'done';
  id: number;
  /** Raw PCM in the stream's format: as many frames as the chunk (plus the latency for the last one). */
  bytes?: ArrayBuffer;
  /** The stream's latency in samples at its rate. */
  latency?: number;
  /** The thread's time spent on this chunk, in ms: its share (by length) of its group's, the model's loading left out. */
  busyMs?: number;
  /** Audio of the group the chunk ran in (chunks of its stream that waited together), in ms. */
  groupMs?: number;
  /** How many times the stream's state started afresh because its output turned non-finite. */
  resets?: number;
  /** Bytes the stream's state holds on the thread (buffers and model state). */
  memoryBytes?: number;
  /** Streams the thread holds after this chunk. */
  threadStreams?: number;
  error?: string;
}

export type FromStreamWorker = ChunkDone;
