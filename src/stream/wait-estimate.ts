// How long the audio already waiting for a stream thread will take this machine to clear: the wait a new
// chunk joins, which the enhance stream node holds under its backlog setting. Work is measured in ms of a
// thread's time per ms of audio and channel, of two kinds: chunks run alone (a live source's chunks come
// one at a time) and chunks that waited together (a burst: its thread runs them in groups of up to
// GROUP_MS, where LARK's network takes 16 frames a run instead of 2, about a third of the cost). Each
// answer refines the measure of its model, for every stream of the process; before the model's first
// answer in this process its known cost stands in, set above what a loaded 2-core machine measured, so
// a burst judged before any answer (its chunks all come before the first one) is not taken on a guess
// that is too kind.
import type { StreamModel } from './live-stream';

/** The most audio a stream thread runs as one push when a stream's chunks wait together (ms). */
export const GROUP_MS = 320;
/** A group this long or longer ran as a burst does (the network's runs full); shorter, as chunks alone. */
export const QUEUED_FROM_MS = 160;
/** Measurements are averaged over about this much audio (ms per channel): a burst's first second settles it. */
const HORIZON_MS = 1000;

/** ms of a thread's time per ms of audio and channel. */
export interface Speeds {
  alone: number;
  queued: number;
}

/**
 * Each model's cost before this process has measured it: about twice what 20 ms chunks of speech cost on
 * a 2-core machine under a load of 6 (FINCH 0.05-0.07; LARK alone 0.28 native, 0.44 WebAssembly; LARK
 * queued 0.10 native, 0.16 WebAssembly), LARK's at the slower runtime.
 */
export const KNOWN_SPEEDS: Readonly<Record<StreamModel, Readonly<Speeds>>> = {
  FINCH: { alone: 0.1, queued: 0.1 },
  LARK: { alone: 0.5, queued: 0.25 },
};

/** A model's measured speed on this machine: a running mean of each kind, from a prior. */
export class ModelSpeed {
  private readonly value: Speeds;

  constructor(prior: Readonly<Speeds>) {
    this.value = { ...prior };
  }

  get speeds(): Readonly<Speeds> {
    return this.value;
  }

  /**
   * One chunk's answer: `busyMs` of its thread's time for `channelMs` of audio (its duration times its
   * channels), run in a group of `groupMs` of audio.
   */
  observe(busyMs: number, channelMs: number, groupMs: number): void {
    if (!(channelMs > 0) || !(busyMs >= 0) || !Number.isFinite(busyMs)) return;
    const kind: keyof Speeds = groupMs >= QUEUED_FROM_MS ? 'queued' : 'alone';
    const weight = Math.min(1, channelMs / HORIZON_MS);
    this.value[kind] += weight * (busyMs / channelMs - this.value[kind]);
  }

  /** The time the audio waiting for a thread takes to clear, in ms. */
  waitMs(waiting: Waiting): number {
    return waiting.aloneMs * this.value.alone + waiting.queuedMs * this.value.queued;
  }
}

/**
 * Audio waiting for a thread, in ms per channel, by how it will run: each stream's first QUEUED_FROM_MS
 * (under way, or soon: its group starts before the rest have come) as chunks alone, the rest of a stream's
 * as a burst. A flood of streams of one chunk each runs alone, one long stream mostly as a burst.
 */
export interface Waiting {
  aloneMs: number;
  queuedMs: number;
}

/** A stream's `ms` waiting (per channel, of `channels`), by how it will run. */
function split(ms: number, channels: number): Waiting {
  const aloneMs = Math.min(ms, QUEUED_FROM_MS * channels);
  return { aloneMs, queuedMs: ms - aloneMs };
}

const machine = new Map<StreamModel, ModelSpeed>();

/** The model's speed as this process has measured it: shared by every node and stream of the model. */
export function machineSpeed(model: StreamModel): ModelSpeed {
  let speed = machine.get(model);
  if (!speed) machine.set(model, (speed = new ModelSpeed(KNOWN_SPEEDS[model])));
  return speed;
}

interface StreamWaiting {
  thread: number;
  channels: number;
  ms: number;
}

/** Audio sent to a node's threads and not answered yet, by thread and stream (in ms per channel). */
export class ThreadBacklog {
  private readonly streams = new Map<number, StreamWaiting>();
  /** Per thread with audio waiting: the totals, and how many streams they are of. */
  private readonly threads = new Map<number, Waiting & { streams: number }>();

  /** The audio waiting for `thread`; with `extra` ms more for `stream` when given (a chunk being judged). */
  waiting(thread: number, extra?: { stream: number; channels: number; ms: number }): Waiting {
    const { aloneMs = 0, queuedMs = 0 } = this.threads.get(thread) ?? {};
    if (!extra) return { aloneMs, queuedMs };
    const had = this.streams.get(extra.stream)?.ms ?? 0;
    const [before, after] = [split(had, extra.channels), split(had + extra.ms, extra.channels)];
    return { aloneMs: aloneMs + after.aloneMs - before.aloneMs, queuedMs: queuedMs + after.queuedMs - before.queuedMs };
  }

  /** Whether anything waits for `thread`. */
  busy(thread: number): boolean {
    return this.threads.has(thread);
  }

  /** The threads with audio waiting. */
  busyThreads(): number[] {
    return [...this.threads.keys()];
  }

  add(thread: number, stream: number, channels: number, ms: number): void {
    let entry = this.streams.get(stream);
    if (!entry) {
      this.streams.set(stream, (entry = { thread, channels, ms: 0 }));
      const total = this.threads.get(thread) ?? { aloneMs: 0, queuedMs: 0, streams: 0 };
      total.streams++;
      this.threads.set(thread, total);
    }
    this.change(entry, entry.ms + ms);
  }

  /** A chunk of `stream` was answered (or failed): its audio no longer waits. */
  done(stream: number, ms: number): void {
    const entry = this.streams.get(stream);
    if (!entry) return;
    // Sums of fractions of a ms leave a rounding residue: under a microsecond is nothing waiting.
    const left = entry.ms - ms < 1e-6 ? 0 : entry.ms - ms;
    this.change(entry, left);
    if (left > 0) return;
    this.streams.delete(stream);
    const total = this.threads.get(entry.thread)!;
    if (--total.streams === 0) this.threads.delete(entry.thread);
  }

  /** The stream of `entry` has `to` ms waiting now: its thread's totals follow. */
  private change(entry: StreamWaiting, to: number): void {
    const total = this.threads.get(entry.thread)!;
    const [before, after] = [split(entry.ms, entry.channels), split(to, entry.channels)];
    total.aloneMs += after.aloneMs - before.aloneMs;
    total.queuedMs += after.queuedMs - before.queuedMs;
    entry.ms = to;
  }
}

/**
 * Whether a chunk joins its thread: a thread with nothing waiting takes any chunk (it starts at once);
 * else the wait with the chunk (`withChunk`) must stay within `limitMs`.
 */
export function admits(speed: ModelSpeed, busy: boolean, withChunk: Waiting, limitMs: number): boolean {
  return !busy || speed.waitMs(withChunk) <= limitMs;
}
