// Live streams on one thread, as a stream thread of the enhance stream node runs them: 1, 4 and 16 streams
// (LARK also 8) of 16 and 48 kHz mono 16-bit PCM, every stream's 20 ms chunk arriving at once, each round
// timed through its whole work (decoded, enhanced, encoded). CPU per chunk p50 and p95, the realtime
// factor (CPU time over audio time, per stream), and how many such streams one core carries. References,
// measured in the same run: RNNoise alone on the same audio at 48 kHz per 20 ms, and the goal's 8 LARK
// streams with each chunk run alone (the path before batching).
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { loadRnnoise, RNNOISE_FRAME, RNNOISE_RATE } from '../src/enhance/rnnoise';
import { enhanceChunk } from '../src/stream/chunk-work';
import { nativeRuntime, type OnnxRuntimeKind } from '../src/enhance/onnx-runtimes';
import { LiveStream, type StreamModel } from '../src/stream/live-stream';
import type { PcmFormat } from '../src/stream/pcm-format';
import { speechLike } from '../test/fixtures/audio';
import type { BenchReport } from './run';

const SECONDS = 8;
/** LARK costs several times FINCH: less audio keeps the run to minutes. */
const LARK_SECONDS = 3;
const CHUNK_MS = 20;
const STREAM_COUNTS = [1, 4, 16];
/** LARK adds the goal's count. */
const LARK_STREAM_COUNTS = [1, 4, 8, 16];
const GOAL_STREAMS = 8;
const RATES = [16000, 48000];
const P95_GOAL_MS = 5;
/** A lone LARK stream on WebAssembly (one microphone, no native runtime): its chunks within their own 20 ms. */
const LONE_WASM_P95_GOAL_MS = 20;

function s16(samples: Float32Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++)
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32768))), i * 2);
  return out;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** RNNoise alone over SECONDS at 48 kHz, CPU time per 20 ms (two frames): p50 and p95 in ms. */
async function rnnoiseAlone(): Promise<{ p50: number; p95: number }> {
  const denoiser = (await loadRnnoise()).createDenoiser();
  const signal = speechLike(RNNOISE_RATE, 1, 5, -26)(SECONDS * RNNOISE_RATE)[0];
  const out = new Float32Array(RNNOISE_FRAME);
  const perChunk = (RNNOISE_RATE * CHUNK_MS) / 1000 / RNNOISE_FRAME;
  const times: number[] = [];
  for (let at = 0; at + perChunk * RNNOISE_FRAME <= signal.length; at += perChunk * RNNOISE_FRAME) {
    const started = cpuMs();
    for (let f = 0; f < perChunk; f++)
      denoiser.process(signal.subarray(at + f * RNNOISE_FRAME, at + (f + 1) * RNNOISE_FRAME), out);
    times.push(cpuMs() - started);
  }
  denoiser.destroy();
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95) };
}

interface Case {
  model: StreamModel;
  runtime: OnnxRuntimeKind;
  rate: number;
  streams: number;
  /** CPU time per chunk: each round's (one chunk of every stream, arriving together) over its chunks. */
  p50: number;
  p95: number;
  /** A round's wall time: when the last chunk of the round is answered. */
  wallP50: number;
  wallP95: number;
  /** CPU time over audio time, per stream. */
  factor: number;
  /** Making the streams, wall and CPU time (the first LARK case of a runtime also makes its session). */
  openWall: number;
  openCpu: number;
  /** The first round alone (every stream's first chunk): when it was answered, and its CPU per chunk. */
  firstWall: number;
  firstCpu: number;
}

/**
 * `count` streams on this thread, 20 ms chunks. `together`: every stream's chunk arrives at once, as a
 * stream thread gets them while live (the LARK runs they ask for are made as one batch); else one chunk
 * after another, each answered before the next is asked for (every chunk its own run: the path before
 * batching, as the reference).
 */
async function measure(
  model: StreamModel,
  rate: number,
  count: number,
  runtime: OnnxRuntimeKind = 'wasm',
  together = true,
): Promise<Case> {
  const format: PcmFormat = { rate, channels: 1, encoding: 's16le' };
  const chunkFrames = (rate * CHUNK_MS) / 1000;
  const seconds = model === 'LARK' ? LARK_SECONDS : SECONDS;
  const audio = Array.from({ length: count }, (_, s) => s16(speechLike(rate, 1, 11 + s, -26)(seconds * rate)[0]));
  const openCpu = cpuMs();
  const openStarted = performance.now();
  const streams = await Promise.all(
    audio.map(() => LiveStream.create({ rate, channels: 1, model, level: 100, runtime })),
  );
  const openWall = performance.now() - openStarted;
  const openSpent = cpuMs() - openCpu;
  const shares: number[] = [];
  const walls: number[] = [];
  const chunks = Math.floor((seconds * rate) / chunkFrames);
  let total = 0;
  for (let c = 0; c < chunks; c++) {
    const chunkOf = (s: number) => audio[s].subarray(c * chunkFrames * 2, (c + 1) * chunkFrames * 2);
    const cpu = cpuMs();
    const started = performance.now();
    if (together)
      await Promise.all(streams.map((stream, s) => enhanceChunk(stream, chunkOf(s), format, c === chunks - 1)));
    else for (let s = 0; s < count; s++) await enhanceChunk(streams[s], chunkOf(s), format, c === chunks - 1);
    walls.push(performance.now() - started);
    const spent = cpuMs() - cpu;
    total += spent;
    shares.push(spent / count);
  }
  for (const stream of streams) stream.destroy();
  const [firstWall, firstCpu] = [walls[0], shares[0]];
  shares.sort((a, b) => a - b);
  walls.sort((a, b) => a - b);
  return {
    model,
    runtime,
    rate,
    streams: count,
    p50: percentile(shares, 0.5),
    p95: percentile(shares, 0.95),
    wallP50: percentile(walls, 0.5),
    wallP95: percentile(walls, 0.95),
    factor: total / (count * chunks * CHUNK_MS),
    openWall,
    openCpu: openSpent,
    firstWall,
    firstCpu,
  };
}

export async function run(): Promise<BenchReport> {
  const loadAtStart = loadavg()[0];
  await measure('FINCH', 16000, 1); // warm-up: WebAssembly compiled, the resampler loaded
  const reference = await rnnoiseAlone();
  const cases: Case[] = [];
  for (const rate of RATES) for (const streams of STREAM_COUNTS) cases.push(await measure('FINCH', rate, streams));
  const native = nativeRuntime().available;
  const runtimes = native ? (['wasm', 'native'] as const) : (['wasm'] as const);
  for (const runtime of runtimes)
    for (const rate of RATES)
      for (const streams of LARK_STREAM_COUNTS) cases.push(await measure('LARK', rate, streams, runtime));
  // The reference for batching, same run: the goal's case with each chunk run alone.
  const goalRuntime = runtimes[runtimes.length - 1];
  const alone = await measure('LARK', 16000, GOAL_STREAMS, goalRuntime, false);
  const batched = cases.find(
    (c) => c.model === 'LARK' && c.runtime === goalRuntime && c.rate === 16000 && c.streams === GOAL_STREAMS,
  )!;
  const ms = (value: number) => `${value.toFixed(2)} ms`;
  const whole = (value: number) => `${value.toFixed(0)} ms`;
  /** A runtime's first LARK case (its thread had no session yet) and its next one-stream case (the session made). */
  const opening = (runtime: OnnxRuntimeKind) => {
    const [cold, warm] = cases.filter((c) => c.model === 'LARK' && c.runtime === runtime && c.streams === 1);
    return (
      `${runtime === 'wasm' ? 'WebAssembly' : 'native'}: the run's first LARK stream (${cold.rate / 1000} kHz, its thread without a session yet) ` +
      `opened in ${whole(cold.openWall)} (${whole(cold.openCpu)} CPU), its first chunk answered ${ms(cold.firstWall)} after it was given ` +
      `(${ms(cold.firstCpu)} CPU): ${whole(cold.openWall + cold.firstWall)} from a stream's first chunk to its answer, as the node makes a ` +
      `stream at its first chunk; with the session made (${warm.rate / 1000} kHz) ${whole(warm.openWall)} and ${ms(warm.firstWall)}.`
    );
  };
  const carried = (c: Case) => Math.floor(1 / c.factor);
  const met = (yes: boolean) => (yes ? 'met' : 'not met');
  const goal = (c: Case) => {
    if (c.model === 'LARK' && c.rate === 16000 && c.runtime === 'native' && c.streams >= GOAL_STREAMS)
      return `${GOAL_STREAMS} streams, p95 < ${P95_GOAL_MS} ms: ${met(c.p95 < P95_GOAL_MS && carried(c) >= GOAL_STREAMS)}`;
    if (c.model === 'LARK' && c.runtime === 'wasm' && c.streams === 1)
      return `p95 < ${LONE_WASM_P95_GOAL_MS} ms: ${met(c.p95 < LONE_WASM_P95_GOAL_MS)} (< ${P95_GOAL_MS} ms: ${met(c.p95 < P95_GOAL_MS)})`;
    return `p95 < ${P95_GOAL_MS} ms: ${met(c.p95 < P95_GOAL_MS)}`;
  };
  return {
    title: 'Live streams (enhance stream): 20 ms chunks on one thread, 1, 4 and 16 streams',
    writtenAlone: true,
    table: [
      [
        'model',
        'rate',
        'streams',
        'CPU per chunk p50',
        'CPU per chunk p95',
        'every stream answered, p50 / p95',
        'realtime factor per stream',
        'streams one core carries',
        'p50, p95 against RNNoise alone per 20 ms',
        'goal',
      ],
      ...[...cases, alone].map((c) => [
        `${c.model} (${c.model === 'FINCH' || c.runtime === 'wasm' ? 'WebAssembly' : 'native'})${c === alone ? ', each chunk alone (before batching)' : ''}`,
        `${c.rate / 1000} kHz`,
        String(c.streams),
        ms(c.p50),
        ms(c.p95),
        `${ms(c.wallP50)} / ${ms(c.wallP95)}`,
        c.factor.toFixed(3),
        String(carried(c)),
        `${(c.p50 / reference.p50).toFixed(2)}, ${(c.p95 / reference.p95).toFixed(2)}`,
        c === alone ? '' : goal(c),
      ]),
    ],
    notes: [
      `RNNoise alone (the reference, same run): p50 ${ms(reference.p50)}, p95 ${ms(reference.p95)} CPU per 20 ms of 48 kHz audio.`,
      `Batching, same run: ${GOAL_STREAMS} LARK streams at 16 kHz (${goalRuntime === 'native' ? 'native' : 'WebAssembly'}) cost ${ms(batched.p50)} CPU per chunk with their chunks arriving together, against ${ms(alone.p50)} each chunk run alone: ${(alone.factor / batched.factor).toFixed(2)}x as many streams per core.`,
      `Opening, same run (wall time; the first LARK stream of a session warms it before it opens, src/stream/lark-denoiser.ts: WARM_UP_SECONDS; the chunks' CPU times above include every stream's first chunk). ${runtimes.map(opening).join(' ')}`,
      `Load average (1 minute) at the run's start and end: ${loadAtStart.toFixed(1)} and ${loadavg()[0].toFixed(1)} on ${cpus().length} cores. Times are CPU time (this process's, from process.cpuUsage), which a busy machine stretches less than wall time; the wall column is the time until every stream's chunk of a round is answered, which load stretches most.`,
      `Every 20 ms each stream's chunk arrives at once, as on a stream thread carrying them (its LARK runs are made as one batch: src/enhance/dfn-model.ts). A round's CPU time over its chunks is the chunk's CPU time. Each chunk's work covers decoding, resampling to 48 kHz and back, the model, the mix and encoding, as a stream thread does it (src/stream/chunk-work.ts); the messages' trip to and from the thread is not included.`,
      '"Streams one core carries" is 1 / the realtime factor: a core kept wholly busy, with nothing left for Node-RED; the node runs streams on up to one thread fewer than the machine has cores, a new stream on the thread with the fewest.',
      'Native: RNNoise runs as WebAssembly only (there is no native build among the dependencies), so FINCH has no native row; LARK runs on onnxruntime-web (WebAssembly) and, where it is installed, onnxruntime-node (native).',
      `${SECONDS} s of speech-like signal per stream, 16-bit mono; LARK ${LARK_SECONDS} s. The goals: at least ${GOAL_STREAMS} LARK streams at 16 kHz on one core with the native runtime, p95 per 20 ms chunk under ${P95_GOAL_MS} ms; one LARK stream on WebAssembly in real time, p95 under ${LONE_WASM_P95_GOAL_MS} ms of CPU per 20 ms chunk from the first chunk after it opened.`,
    ],
  };
}
