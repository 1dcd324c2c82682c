// A look-ahead true-peak limiter: applies a gain, then keeps every oversampled value of the output at
// or under the ceiling. The gain it needs at each frame is turned into a smooth envelope that can never
// be too late or too shallow:
//   need[k]  = ceiling / (gain * true-peak envelope at frame k), at most 1
//   hold[j]  = min(need[j .. j+L-1])            (look ahead L frames)
//   rel[j]   = min(hold[j], rel[j-1] recovering towards 1 with the release time)
//   g[j]     = mean(rel[j-L+1 .. j])             (a linear ramp over L frames: no step, no click)
// g[n] <= need[n] for every n, because each of the L values averaged was already <= need[n].
// The output is the input delayed by `latency` frames; flush() returns the last ones.
import { STRETCH_SHIFT, type EnvelopeBounds } from './envelope-bounds';
import type { Planar } from './pcm-codec';
import { PeakInterpolator } from './peak-interpolator';
import { SlidingMax } from './sliding-max';

const STRETCH_MASK = 2 ** STRETCH_SHIFT - 1;

/** The limiter's look-ahead and attack ramp unless told otherwise (ms). */
export const DEFAULT_LOOKAHEAD_MS = 5;

export interface LimiterOptions {
  sampleRate: number;
  channels: number;
  /** Gain applied before limiting (dB). */
  gainDb: number;
  /** Highest true peak allowed out (dBTP). */
  ceilingDb: number;
  /** Look-ahead and attack ramp (ms). Default DEFAULT_LOOKAHEAD_MS. */
  lookaheadMs?: number;
  /** Time constant of the recovery after a reduction. Default 150 ms: slow enough not to pump on speech. */
  releaseMs?: number;
  /** What earlier passes over the same input learnt of its peaks; this pass uses it and adds to it. */
  knownPeaks?: EnvelopeBounds;
}

export class TruePeakLimiter {
  readonly latency: number;
  /** Smallest gain the limiter applied (1 = it never acted). */
  minGain = 1;
  private readonly interpolator: PeakInterpolator;
  private readonly gain: number;
  private readonly ceiling: number;
  private readonly lookahead: number;
  private readonly release: number;
  private readonly size: number;
  private readonly mask: number;
  // Input samples per channel, written twice (at i and i + size) so any window is contiguous.
  private readonly rings: Float64Array[];
  private readonly frameAbs: Float64Array;
  private readonly rels: Float64Array;
  private readonly windowMax: SlidingMax;
  private readonly needMin: SlidingMax;
  private frame = 0;
  private previousInterval = 0;
  private rel = 1;
  private relSum: number;
  private readonly knownPeaks?: EnvelopeBounds;
  /** The stretch (envelope-bounds) of the interval under way: what earlier passes knew of it, what this one found. */
  private stretchKnown = Infinity;
  private stretchFound = 0;

  constructor(options: LimiterOptions) {
    const { sampleRate, channels } = options;
    this.interpolator = new PeakInterpolator(sampleRate);
    const { interpolator } = this;
    this.gain = 10 ** (options.gainDb / 20);
    this.ceiling = 10 ** (options.ceilingDb / 20);
    this.lookahead = Math.max(1, Math.round(((options.lookaheadMs ?? DEFAULT_LOOKAHEAD_MS) / 1000) * sampleRate));
    this.release = 1 - Math.exp(-1 / (((options.releaseMs ?? 150) / 1000) * sampleRate));
    this.latency = interpolator.after + this.lookahead - 1;
    this.size = 2 ** Math.ceil(Math.log2(Math.max(this.latency, interpolator.taps) + 2));
    this.mask = this.size - 1;
    this.rings = Array.from({ length: channels }, () => new Float64Array(2 * this.size));
    this.frameAbs = new Float64Array(this.size);
    this.rels = new Float64Array(this.size).fill(1);
    this.relSum = this.lookahead;
    this.windowMax = new SlidingMax(interpolator.taps);
    this.needMin = new SlidingMax(this.lookahead);
    this.knownPeaks = options.knownPeaks;
  }

  /** Limits `frames` frames of `input` into `output` (same capacity); returns how many frames came out. */
  process(input: Planar, frames: number, output: Planar): number {
    const { rings, mask, size, gain, ceiling, interpolator, frameAbs, rels, needMin, lookahead, release } = this;
    const knownPeaks = this.knownPeaks;
    const channels = rings.length;
    const bound = interpolator.gainBound * gain;
    const { after, taps } = interpolator;
    // Kept in locals for the loop, written back after it.
    let { frame, previousInterval, rel, relSum, minGain, stretchKnown, stretchFound } = this;
    let written = 0;
    for (let i = 0; i < frames; i++) {
      const f = frame++;
      const slot = f & mask;
      let abs = 0;
      for (let c = 0; c < channels; c++) {
        const x = input[c][i];
        rings[c][slot] = x;
        rings[c][slot + size] = x;
        const a = x < 0 ? -x : x;
        if (a > abs) abs = a;
      }
      frameAbs[slot] = abs;
      this.windowMax.push(f, abs);

      // The interval between frames k and k+1 now has its whole interpolation window.
      const k = f - after;
      if (k < 0) continue;
      if (knownPeaks && (k & STRETCH_MASK) === 0) {
        if (k > 0) knownPeaks.set((k >> STRETCH_SHIFT) - 1, stretchFound);
        stretchKnown = knownPeaks.boundOf(k >> STRETCH_SHIFT);
        stretchFound = 0;
      }
      let interval = 0;
      if (stretchKnown * gain > ceiling) {
        const start = f - taps + 1;
        const windowBound = this.windowMax.maxFrom(start) * bound;
        if (windowBound > ceiling) {
          const from = start & mask;
          for (let c = 0; c < channels; c++) {
            const v = interpolator.intervalPeak(rings[c], from);
            if (v > interval) interval = v;
          }
          if (interval > stretchFound) stretchFound = interval;
        } else {
          const upper = windowBound / gain;
          if (upper > stretchFound) stretchFound = upper < stretchKnown ? upper : stretchKnown;
        }
      } else if (stretchKnown > stretchFound) stretchFound = stretchKnown;
      const frameAbsK = frameAbs[k & mask];
      const envelope =
        gain *
        (frameAbsK > previousInterval
          ? frameAbsK > interval
            ? frameAbsK
            : interval
          : previousInterval > interval
            ? previousInterval
            : interval);
      previousInterval = interval;
      // Stored negated: the sliding maximum of -need is minus the sliding minimum of need.
      needMin.push(k, envelope > ceiling ? -ceiling / envelope : -1);

      // The envelope starts lookahead - 1 frames before the first frame out, so that the ramp into a
      // peak at the very start of the file is as complete as anywhere else.
      const j = k - lookahead + 1;
      const hold = -needMin.maxFrom(j);
      const recovered = rel + (1 - rel) * release;
      rel = hold < recovered ? hold : recovered;
      const r = j & mask;
      relSum += rel - rels[(j - lookahead) & mask];
      rels[r] = rel;
      if (j < 0) continue;
      const g = relSum / lookahead;
      if (g < minGain) minGain = g;
      const scale = gain * g;
      for (let c = 0; c < channels; c++) output[c][written] = scale * rings[c][r];
      written++;
    }
    Object.assign(this, { frame, previousInterval, rel, relSum, minGain, stretchKnown, stretchFound });
    return written;
  }

  /** Pushes silence through to get the last `latency` frames out. */
  flush(output: Planar): number {
    const silence = Array.from({ length: this.rings.length }, () => new Float32Array(this.latency));
    const written = this.process(silence, this.latency, output);
    // The last stretch, whole or not, is known too.
    const k = this.frame - this.interpolator.after - 1;
    if (k >= 0) this.knownPeaks?.set(k >> STRETCH_SHIFT, this.stretchFound);
    return written;
  }
}
