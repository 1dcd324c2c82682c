// What the live page and its flow (examples/08) say to each other over the websocket. The page sends
// binary messages: a sequence number (32-bit, little-endian) and then 10 ms of the microphone as 16-bit
// PCM, 16 kHz mono, the enhance stream node's default format. The flow answers each one, to that tab only:
// binary, the same sequence number, the stream's latency in ms (32-bit float) and the cleaned chunk; or,
// for a chunk it refused, a text message {"seq": n, "error": "why"} (no seq when it was not a chunk). The flow's function nodes write and
// read the same layout in JavaScript.
// Plain TypeScript with no imports: it runs in the browser, and in Node for the tests.

export const LIVE_RATE = 16000;
export const CHUNK_MS = 10;
export const CHUNK_SAMPLES = (LIVE_RATE * CHUNK_MS) / 1000;
/** Bytes before the PCM: the sequence number, and in an answer the latency too. */
export const CHUNK_HEADER = 4;
export const ANSWER_HEADER = 8;

export interface Answer {
  seq: number;
  latencyMs: number;
  samples: Float32Array;
}

/** A chunk as the page sends it: 16-bit samples, rounded and clipped. */
export function encodeChunk(seq: number, samples: Float32Array): ArrayBuffer {
  const buffer = new ArrayBuffer(CHUNK_HEADER + 2 * samples.length);
  const view = new DataView(buffer);
  view.setUint32(0, seq, true);
  for (let i = 0; i < samples.length; i++) {
    const value = Math.round(samples[i] * 32768);
    view.setInt16(CHUNK_HEADER + 2 * i, value > 32767 ? 32767 : value < -32768 ? -32768 : value, true);
  }
  return buffer;
}

/** A chunk as the flow receives it, for the tests: its sequence number and samples. */
export function decodeChunk(bytes: ArrayBuffer): { seq: number; samples: Float32Array } {
  const view = new DataView(bytes);
  return { seq: view.getUint32(0, true), samples: pcm(view, CHUNK_HEADER) };
}

/** An answer, or null when the message is not one (too short, or not whole samples). */
export function decodeAnswer(bytes: ArrayBuffer): Answer | null {
  if (bytes.byteLength < ANSWER_HEADER || (bytes.byteLength - ANSWER_HEADER) % 2 !== 0) return null;
  const view = new DataView(bytes);
  return { seq: view.getUint32(0, true), latencyMs: view.getFloat32(4, true), samples: pcm(view, ANSWER_HEADER) };
}

/** A refusal's text message (its seq absent when the message was not a chunk at all), or null when the text is not one. */
export function decodeRefusal(text: string): { seq?: number; error: string } | null {
  try {
    const value = JSON.parse(text) as { seq?: unknown; error?: unknown };
    if (typeof value.error !== 'string') return null;
    return typeof value.seq === 'number' ? { seq: value.seq, error: value.error } : { error: value.error };
  } catch {
    return null;
  }
}

function pcm(view: DataView, from: number): Float32Array {
  const samples = new Float32Array((view.byteLength - from) / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(from + 2 * i, true) / 32768;
  return samples;
}
