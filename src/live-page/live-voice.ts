// The live page's audio work, run by its AudioWorklet (voice-worklet.ts) on the browser's audio thread, so
// the page's main thread only passes messages between it and the websocket. Capture: the microphone at the
// AudioContext's rate, filtered and decimated to 16 kHz, cut into 10 ms chunks, each stamped with the time
// its first sample was heard. Playback: the answers queued in order (jitter-buffer.ts), resampled back to
// the context's rate with the same filter. Every chunk that plays gives the delay from the microphone to
// the output, on the audio clock itself, in parts: the wait for a whole chunk, the way to Node-RED and
// back, the queue, and the stream's latency. "Hear the original"
// queues the microphone's own chunks in place of the answers, shifted by that latency: the same delay,
// the same path, without the enhancement. A recording taps exactly what goes to the speakers.
// Plain TypeScript with no DOM: it runs in an AudioWorklet, and in Node for its tests.
import { JitterBuffer } from './jitter-buffer';
import { SincResampler, speechBand } from './sinc-resampler';
import { CHUNK_MS, CHUNK_SAMPLES, decodeAnswer, encodeChunk, LIVE_RATE } from './wire-format';

/** Recent microphone blocks whose frame is kept: a chunk's first sample is a few blocks back at most. */
const BLOCKS_KEPT = 32;
/** How often the page hears the figures. */
const STATS_SECONDS = 0.25;
/**
 * The queue's margin over the spread of the round trips: a render quantum (2.9 ms at 44.1 kHz), in which
 * the player takes its samples, and a little more.
 */
const MARGIN_MS = 4;
/**
 * The most margin the queue keeps, whatever the spread: hearing yourself is past bearing much beyond 150 ms
 * (the rest of the way takes 60 to 100), so a connection that jitters more costs a gap now and then rather
 * than a longer delay all the time.
 */
const MAX_MARGIN_MS = 30;
/** The round trips the margin is taken from: those of the last 2.5 s. */
const ROUND_TRIP_SECONDS = 2.5;
/** The microphone's own chunks kept for "hear the original": far more than any latency and queue. */
const ORIGINAL_SECONDS = 4;

export type Hearing = 'cleaned' | 'original';

/** What the page tells the worklet. */
export type ToVoice =
  /** The websocket is open: the microphone's chunks may go (before, they would only pile up). */
  | { type: 'start' }
  | { type: 'answer'; bytes: ArrayBuffer }
  | { type: 'refused'; seq: number }
  | { type: 'hear'; what: Hearing }
  | { type: 'record'; frames: number };

/** One chunk's way from the microphone to the output, in ms. */
export interface DelayParts {
  /** From its first sample to the chunk being whole and sent (its length, and the filter's reach). */
  chunk: number;
  /** Sent to Node-RED, and its answer back in the worklet. */
  roundTrip: number;
  /** In the queue, and the filter's reach on the way out. */
  queue: number;
  /** The stream's latency (msg.latency). */
  enhance: number;
}

export interface VoiceStats {
  type: 'stats';
  /** Mean and most over the chunks played since the last stats; null when none played. */
  delayMs: number | null;
  maxDelayMs: number | null;
  parts: DelayParts | null;
  queuedMs: number;
  marginMs: number;
  sent: number;
  answered: number;
  refused: number;
  late: number;
  /** Audio the queue let go because it held more than it needed (ms, in all). */
  letGoMs: number;
  underruns: number;
  hearing: Hearing;
}

/** What the worklet tells the page. */
export type FromVoice = { type: 'chunk'; bytes: ArrayBuffer } | VoiceStats | Recorded;

/** What went to the speakers and what the microphone gave over the same frames, and where what played broke. */
export interface Recorded {
  type: 'recorded';
  rate: number;
  input: Float32Array;
  output: Float32Array;
  /** The frames (from the recording's start) of the quanta in which the queue broke: a gap, or audio let go. */
  breaks: number[];
  /** Each chunk that played: the frame (from the recording's start) it started at, and its delay in the page (ms). */
  delays: Array<{ frame: number; ms: number }>;
}

export type Post = (message: FromVoice, transfer?: Transferable[]) => void;

interface Timing {
  /** Audio-clock frames: when its first sample was heard, when it was sent, when its answer came. */
  heard: number;
  sent: number;
  answered?: number;
  latencyMs?: number;
}

interface Recording {
  input: Float32Array;
  output: Float32Array;
  breaks: number[];
  delays: Array<{ frame: number; ms: number }>;
  /** Frames recorded so far, and the frame the recording started at. */
  at: number;
  since?: number;
}

export class LiveVoice {
  private readonly decimator: SincResampler;
  private readonly player: SincResampler;
  private readonly queue: JitterBuffer;
  private readonly chunk = new Float32Array(CHUNK_SAMPLES);
  private chunkFill = 0;
  private seq = 0;
  /** The frame each recent block of the microphone came in at, by the index of its first sample. */
  private readonly blocks: Array<{ sample: number; frame: number }> = [];
  private samplesIn = 0;
  private readonly timings = new Map<number, Timing>();
  /** Where in the played 16 kHz stream each queued chunk starts, in the order they play. */
  private readonly starts: Array<{ seq: number; at: number }> = [];
  private readonly original = new Float32Array(ORIGINAL_SECONDS * LIVE_RATE);
  private started = false;
  private hearing: Hearing = 'cleaned';
  private answered = 0;
  /** How many chunks had been sent when the first answer came. */
  private sentBeforeFirstAnswer: number | undefined;
  private played: Array<{ delay: number; parts: DelayParts }> = [];
  private statsDue: number;
  private recording: Recording | undefined;
  private readonly scratchIn = new Float32Array(256);
  private scratchOut = new Float32Array(256);

  constructor(
    /** The AudioContext's rate. */
    readonly rate: number,
    private readonly post: Post,
  ) {
    const band = speechBand(Math.min(rate, LIVE_RATE));
    this.decimator = new SincResampler(rate, LIVE_RATE, band);
    this.player = new SincResampler(LIVE_RATE, rate, band);
    const perMs = LIVE_RATE / 1000;
    this.queue = new JitterBuffer({
      chunk: CHUNK_SAMPLES,
      margin: { start: 10 * perMs, min: MARGIN_MS * perMs, max: MAX_MARGIN_MS * perMs },
      remember: (ROUND_TRIP_SECONDS * 1000) / CHUNK_MS,
      watch: LIVE_RATE / 2,
    });
    this.statsDue = STATS_SECONDS * rate;
  }

  /** One render quantum: `input` from the microphone (undefined while none is connected), `output` to fill. */
  process(input: Float32Array | undefined, output: Float32Array, frame: number): void {
    if (!this.started) {
      output.fill(0);
      return;
    }
    this.capture(input, output.length, frame);
    const broke = this.play(output, frame);
    this.record(input, output, frame, broke);
    if (this.samplesIn >= this.statsDue) {
      this.statsDue += STATS_SECONDS * this.rate;
      this.postStats();
    }
  }

  receive(message: ToVoice, frame: number): void {
    if (message.type === 'start') this.started = true;
    else if (message.type === 'answer') this.answer(message.bytes, frame);
    else if (message.type === 'refused') {
      this.timings.delete(message.seq);
      this.queue.refuse(message.seq);
    } else if (message.type === 'hear') this.hearing = message.what;
    else if (message.type === 'record')
      this.recording = {
        input: new Float32Array(message.frames),
        output: new Float32Array(message.frames),
        breaks: [],
        delays: [],
        at: 0,
      };
  }

  private capture(input: Float32Array | undefined, frames: number, frame: number): void {
    // The frame of each block, not a count of samples: a busy browser may skip a render quantum, and the
    // delay grows by as much.
    this.blocks.push({ sample: this.samplesIn, frame });
    if (this.blocks.length > BLOCKS_KEPT) this.blocks.shift();
    this.samplesIn += frames;
    // No microphone yet (or a block it missed) is silence: the clock goes on.
    this.decimator.push(input ?? new Float32Array(frames));
    const made = this.decimator.pull(this.scratchIn);
    for (let i = 0; i < made; i++) {
      this.chunk[this.chunkFill++] = this.scratchIn[i];
      if (this.chunkFill === CHUNK_SAMPLES) this.send(frame + frames);
    }
  }

  private send(now: number): void {
    const seq = this.seq++;
    const first = seq * CHUNK_SAMPLES;
    for (let i = 0; i < CHUNK_SAMPLES; i++) this.original[(first + i) % this.original.length] = this.chunk[i];
    this.timings.set(seq, { heard: this.heardAt(first * this.decimator.step), sent: now });
    const bytes = encodeChunk(seq, this.chunk);
    this.post({ type: 'chunk', bytes }, [bytes]);
    this.chunkFill = 0;
  }

  /**
   * The frame at which the microphone's sample at `position` (fractional) came in: a 16 kHz sample's time is
   * its position in the microphone's samples, since the filter has no phase shift.
   */
  private heardAt(position: number): number {
    const block = [...this.blocks].reverse().find((b) => b.sample <= position) ?? this.blocks[0];
    return block.frame + (position - block.sample);
  }

  private answer(bytes: ArrayBuffer, frame: number): void {
    const answer = decodeAnswer(bytes);
    if (!answer) return;
    this.answered++;
    const timing = this.timings.get(answer.seq);
    if (timing) {
      timing.answered = frame;
      timing.latencyMs = answer.latencyMs;
    }
    const samples =
      this.hearing === 'original'
        ? this.originalFor(answer.seq, answer.latencyMs, answer.samples.length)
        : answer.samples;
    // Chunks sent before the first answer came waited for Node-RED to open the stream (its worker thread,
    // the model): their round trips say nothing of the connection, and would widen the margin for seconds.
    this.sentBeforeFirstAnswer ??= this.seq;
    const roundTrip =
      timing && answer.seq >= this.sentBeforeFirstAnswer ? ((frame - timing.sent) * LIVE_RATE) / this.rate : undefined;
    this.queue.put(answer.seq, samples, roundTrip);
  }

  /** The microphone's own samples that the answer to chunk `seq` carries, cleaned: as late as its latency. */
  private originalFor(seq: number, latencyMs: number, length: number): Float32Array {
    const from = seq * CHUNK_SAMPLES - Math.round((latencyMs * LIVE_RATE) / 1000);
    const out = new Float32Array(length);
    for (let i = 0; i < length; i++) {
      const at = from + i;
      if (at >= 0 && at > this.seq * CHUNK_SAMPLES - this.original.length)
        out[i] = this.original[at % this.original.length];
    }
    return out;
  }

  /** Fills the output; returns whether what plays broke in it (a gap, or audio let go). */
  private play(output: Float32Array, frame: number): boolean {
    const breaks = this.queue.breaks;
    const needed = this.player.needed(output.length);
    if (needed > 0) {
      if (this.scratchOut.length < needed) this.scratchOut = new Float32Array(2 * needed);
      const samples = this.scratchOut.subarray(0, needed);
      const base = this.player.pushed;
      this.queue.take(samples, (seq, offset) => this.starts.push({ seq, at: base + offset }));
      this.player.push(samples);
    }
    const from = this.player.position;
    const made = this.player.pull(output);
    output.fill(0, made);
    const step = this.player.step;
    while (this.starts.length > 0 && this.starts[0].at < from + made * step) {
      const { seq, at } = this.starts.shift()!;
      this.chunkPlayed(seq, frame + Math.max(0, Math.ceil((at - from) / step)));
    }
    return this.queue.breaks !== breaks;
  }

  private chunkPlayed(seq: number, frame: number): void {
    const timing = this.timings.get(seq);
    this.timings.delete(seq);
    // Chunks before it that never came back are given up.
    for (const old of this.timings.keys()) if (old < seq) this.timings.delete(old);
    if (!timing || timing.answered === undefined || timing.latencyMs === undefined) return;
    const ms = (frames: number) => (frames * 1000) / this.rate;
    const parts: DelayParts = {
      chunk: ms(timing.sent - timing.heard),
      roundTrip: ms(timing.answered - timing.sent),
      queue: ms(frame - timing.answered),
      enhance: timing.latencyMs,
    };
    const delay = parts.chunk + parts.roundTrip + parts.queue + parts.enhance;
    this.played.push({ delay, parts });
    const recording = this.recording;
    if (recording?.since !== undefined) recording.delays.push({ frame: frame - recording.since, ms: delay });
  }

  private record(input: Float32Array | undefined, output: Float32Array, frame: number, broke: boolean): void {
    const recording = this.recording;
    if (!recording) return;
    recording.since ??= frame;
    if (broke) recording.breaks.push(recording.at);
    const count = Math.min(output.length, recording.output.length - recording.at);
    if (input) recording.input.set(input.subarray(0, count), recording.at);
    recording.output.set(output.subarray(0, count), recording.at);
    recording.at += count;
    if (recording.at < recording.output.length) return;
    this.recording = undefined;
    const { input: heard, output: played, breaks, delays } = recording;
    this.post({ type: 'recorded', rate: this.rate, input: heard, output: played, breaks, delays }, [
      recording.input.buffer as ArrayBuffer,
      recording.output.buffer as ArrayBuffer,
    ]);
  }

  private postStats(): void {
    const played = this.played;
    this.played = [];
    const mean = (pick: (p: (typeof played)[number]) => number) =>
      played.reduce((sum, p) => sum + pick(p), 0) / played.length;
    const perMs = LIVE_RATE / 1000;
    this.post({
      type: 'stats',
      delayMs: played.length ? mean((p) => p.delay) : null,
      maxDelayMs: played.length ? Math.max(...played.map((p) => p.delay)) : null,
      parts: played.length
        ? {
            chunk: mean((p) => p.parts.chunk),
            roundTrip: mean((p) => p.parts.roundTrip),
            queue: mean((p) => p.parts.queue),
            enhance: mean((p) => p.parts.enhance),
          }
        : null,
      queuedMs: this.queue.queued / perMs,
      marginMs: this.queue.margin / perMs,
      sent: this.seq,
      answered: this.answered,
      refused: this.queue.lost,
      late: this.queue.late,
      letGoMs: this.queue.letGo / perMs,
      underruns: this.queue.underruns,
      hearing: this.hearing,
    });
  }
}
