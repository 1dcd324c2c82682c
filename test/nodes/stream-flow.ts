// The enhance stream node's tests share this: a flow of the node with a helper on its output and a Catch
// on the tab, raw PCM made from samples and back, chunks sent as a microphone (or a burst) sends them.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { collect, helper, placed, sleep, TAB, type FlowNode } from './flow-helper';

export const RATE = 16000;
/** 20 ms at 16 kHz. */
export const CHUNK = 320;

// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by path, the way Node-RED loads them
const STREAM_NODE = require(join(__dirname, '..', '..', '..', 'nodes', 'media-enhance-stream.js')) as unknown;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's core Catch node
const CATCH_NODE = require('@node-red/nodes/core/common/25-catch.js') as unknown;

export type Msg = Record<string, unknown>;

export function toS16(samples: Float32Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++)
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32768))), i * 2);
  return out;
}

export function fromS16(bytes: Buffer): Float32Array {
  const out = new Float32Array(bytes.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readInt16LE(i * 2) / 32768;
  return out;
}

export function toF32(samples: Float32Array): Buffer {
  return Buffer.from(Float32Array.from(samples).buffer);
}

export function fromF32(bytes: Buffer): Float32Array {
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

export function chunksOf(bytes: Buffer, size = CHUNK * 2): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, Math.min(bytes.length, at + size)));
  return chunks;
}

export function joined(messages: Msg[]): Buffer {
  return Buffer.concat(messages.map((m) => m.payload as Buffer));
}

export function flow(settings: Msg = {}): object[] {
  return placed([
    TAB,
    { id: 'stream', type: 'media-enhance-stream', z: 'tab', name: '', ...settings, wires: [['out']] },
    { id: 'out', type: 'helper', z: 'tab' },
    { id: 'catch', type: 'catch', z: 'tab', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', type: 'helper', z: 'tab' },
  ]);
}

/** The flow deployed with the node's `settings`: the node, what it sent, what went to Catch. */
export async function load(settings: Msg): Promise<{ stream: FlowNode; outputs: Msg[]; errors: Msg[] }> {
  await helper.load([STREAM_NODE, CATCH_NODE], flow(settings));
  return {
    stream: helper.getNode('stream'),
    outputs: collect(helper.getNode('out')),
    errors: collect(helper.getNode('caught')),
  };
}

export async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Sends the chunks as a microphone would (without waiting on the node), the last with msg.complete. */
export async function stream(node: FlowNode, outputs: Msg[], chunks: Buffer[], extra: Msg = {}): Promise<Msg[]> {
  const before = outputs.length;
  chunks.forEach((payload, i) =>
    node.receive({ payload, ...extra, ...(i === chunks.length - 1 ? { complete: true } : {}) }),
  );
  await until(() => outputs.length - before >= chunks.length, `${chunks.length} outputs`);
  return outputs.slice(before);
}

/** The lag (samples) at which `output` best matches `input`, searched from 0 to `range`. */
export function measuredLag(input: Float32Array, output: Float32Array, range: number): number {
  let best = -Infinity;
  let lag = 0;
  for (let d = 0; d <= range; d++) {
    let sum = 0;
    for (let i = 0; i < input.length && i + d < output.length; i++) sum += input[i] * output[i + d];
    if (sum > best) [best, lag] = [sum, d];
  }
  return lag;
}

/**
 * The largest difference between two outputs' samples. LARK's output depends, to float rounding, on how
 * many frames its network runs at once, which depends on how a stream's chunks waited (a burst runs
 * them in groups); FINCH's does not.
 */
export function largestDifference(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length, 'as long');
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

/** The error message a message caught by Catch carries. */
export function errorText(msg: Msg): string {
  return (msg.error as { message: string }).message;
}
