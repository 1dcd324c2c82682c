// True peak (BS.1770-4 Annex 2): the signal between samples, found by oversampling. The interpolation
// filter is a Kaiser-windowed sinc split into its phases; phase 0 is the sample itself, so only the
// points between each pair of samples are computed.
// The filter is the one of ffmpeg's resampler (libswresample's defaults: 32 taps, Kaiser beta 9, cut at
// Nyquist), with which ffmpeg's ebur128 meter reads the true peak at 192 kHz: a peak under the ceiling
// here is under it there too. BS.1770's 4x is meant for 48 kHz; a 16 kHz file's points between samples
// lie further apart in time, and 4x would miss up to 0.7 dB of its peaks, so the factor grows with
// lower rates. Where 192 kHz is no multiple of the rate (44.1 kHz), the reference meter's points fall
// between ours: the grid is twice as fine there.

/** The fewest interpolated points per second, when 192 kHz is a multiple of the rate, and otherwise. */
const POINTS_PER_SECOND = 192_000;
const POINTS_PER_SECOND_OFF_GRID = 2 * POINTS_PER_SECOND;
const MIN_OVERSAMPLING = 4;
/** Taps per phase: every phase is within 0.02 dB of flat up to 0.42 fs (a test checks). */
export const TAPS_PER_PHASE = 32;
const KAISER_BETA = 9;

export function oversamplingFor(sampleRate: number): number {
  const points = POINTS_PER_SECOND % sampleRate === 0 ? POINTS_PER_SECOND : POINTS_PER_SECOND_OFF_GRID;
  return Math.max(MIN_OVERSAMPLING, Math.ceil(points / sampleRate));
}

export class PeakInterpolator {
  readonly taps = TAPS_PER_PHASE;
  /** Samples a window needs before the interval's left sample (that sample included). */
  readonly before = TAPS_PER_PHASE / 2;
  /** Samples a window needs after the interval's left sample. */
  readonly after = TAPS_PER_PHASE / 2;
  readonly oversampling: number;
  /** Coefficients of phases 1..oversampling-1 (phase p interpolates at p/oversampling of the interval). */
  readonly phases: Float64Array[];
  /** No interpolated point exceeds this times the largest |sample| in its window. */
  readonly gainBound: number;
  /** Phase p and phase (oversampling - p) mirror each other: their halves' sums (even) and differences (odd), p < oversampling/2, one array per pair. */
  private readonly even: Float64Array[];
  private readonly odd: Float64Array[];
  /** Phase oversampling/2, its own mirror (only for an even factor). */
  private readonly middle?: Float64Array;

  constructor(sampleRate: number) {
    this.oversampling = oversamplingFor(sampleRate);
    this.phases = [];
    let bound = 1;
    for (let p = 1; p < this.oversampling; p++) {
      const c = new Float64Array(this.taps);
      let sum = 0;
      for (let j = 0; j < this.taps; j++) {
        const t = p / this.oversampling - (j - (this.before - 1)); // distance from tap j to the interpolated point
        c[j] = sinc(t) * kaiser(t / (this.taps / 2), KAISER_BETA);
        sum += c[j];
      }
      let absolute = 0;
      for (let j = 0; j < this.taps; j++) {
        c[j] /= sum; // unity gain at DC
        absolute += Math.abs(c[j]);
      }
      bound = Math.max(bound, absolute);
      this.phases.push(c);
    }
    this.gainBound = bound;
    const half = this.taps / 2;
    this.even = [];
    this.odd = [];
    for (let p = 1; 2 * p < this.oversampling; p++) {
      const c = this.phases[p - 1];
      this.even.push(Float64Array.from({ length: half }, (_, j) => (c[j] + c[this.taps - 1 - j]) / 2));
      this.odd.push(Float64Array.from({ length: half }, (_, j) => (c[j] - c[this.taps - 1 - j]) / 2));
    }
    if (this.oversampling % 2 === 0) this.middle = this.phases[this.oversampling / 2 - 1].slice(0, half);
  }

  /**
   * Largest |value| at the points between samples `start + before - 1` and `start + before` of `buf`
   * (the window is buf[start .. start + taps - 1]).
   */
  intervalPeak(buf: Float32Array | Float64Array, start: number): number {
    // With the sums and differences of mirrored samples, a pair of mirrored phases costs 2 multiplies
    // per pair of samples, not 4.
    const { even, odd, middle } = this;
    const last = start + TAPS_PER_PHASE - 1;
    let peak = 0;
    for (let p = 0; p < even.length; p++) {
      const e = even[p];
      const o = odd[p];
      let se = 0;
      let so = 0;
      for (let j = 0; j < TAPS_PER_PHASE / 2; j++) {
        const a = buf[start + j];
        const b = buf[last - j];
        se += e[j] * (a + b);
        so += o[j] * (a - b);
      }
      const v1 = se + so;
      const v2 = se - so;
      const m = Math.max(v1 < 0 ? -v1 : v1, v2 < 0 ? -v2 : v2);
      if (m > peak) peak = m;
    }
    if (middle) {
      let sm = 0;
      for (let j = 0; j < TAPS_PER_PHASE / 2; j++) sm += middle[j] * (buf[start + j] + buf[last - j]);
      if (sm < 0) sm = -sm;
      if (sm > peak) peak = sm;
    }
    return peak;
  }
}

function sinc(t: number): number {
  if (t === 0) return 1;
  const x = Math.PI * t;
  return Math.sin(x) / x;
}

function kaiser(x: number, beta: number): number {
  if (x <= -1 || x >= 1) return 0;
  return besselI0(beta * Math.sqrt(1 - x * x)) / besselI0(beta);
}

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}
