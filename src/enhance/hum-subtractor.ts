// Mains hum taken out by subtraction, streamed. The signal is cut into blocks of BLOCK_SECONDS that
// overlap by half. In each block, every harmonic the detector found is fitted as a steady tone at its
// frequency, by weighted least squares: a Hann window divided by the signal's power (over a tenth of a
// second), so the fit rests on the quiet stretches where the hum is alone and leans little on the voice.
// The fundamental is followed as mains wanders: a second fit, whose amplitudes may drift across the
// block, says by how much the harmonics' phases turn. The fits are cross-faded block to block and their
// sum is subtracted. Notches take the voice within a hertz or two of each harmonic and shift its phase
// for tens of hertz around; the fit takes only what of the voice looks like the hum across the whole
// block, and shifts no phase. That share is also what is left in the pauses: on 5 s clips with the hum
// at 0-10 dB under the voice, 12-25 dB under the hum (the noise reduction after it takes more).
// Output sample n is input sample n; the output lags the input by up to a block until the flush.
import type { HumReport } from './hum-detector';

/**
 * Chosen by measurement on the quality bench's six clips under 50 Hz hum at 0-10 dB SNR: what is left of
 * the hum and what was taken from the voice together lay 17-26 dB under the voice with 1 s blocks,
 * 18-29 dB with 2 s and 19-30 dB with 4 s; hum alone whose fundamental wanders +/-0.1 Hz over 30 s went
 * 50, 36 and 22 dB down.
 */
export const BLOCK_SECONDS = 2;

/** The followed fundamental stays within this of the detector's (Hz): mains never strays further. */
const MAX_WANDER_HZ = 0.5;
/** The highest harmonic the detector reports: the margin below Nyquist leaves room for it to wander. */
const HARMONIC_LIMIT = 10;

/**
 * The fit's weights follow the power over this many periods of the hum (0.1 s), smoothly: weights that
 * rose and fell faster would move a tone beside a harmonic onto it (per period, a steady 75 Hz tone under
 * 50 Hz hum lost 11 dB to the subtraction; over 5 periods, -53 dB), slower ones would miss the pauses.
 */
const SPAN_PERIODS = 5;

/** A phase turn (radians) of the highest harmonic across a block that is worth fitting again for. */
const REFIT_RADIANS = 0.05;

/** This many exact zeros in a row (5 ms at 48 kHz) are digital silence: it holds no hum, and none is subtracted there. */
const SILENT_RUN = 240;
/** The weights' floor never goes under this mean square (-120 dBFS). */
const QUIET_FLOOR = 1e-12;

export class HumSubtractor {
  private readonly size: number;
  private readonly hop: number;
  private readonly window: Float64Array;
  /** Which multiples of the fundamental are subtracted. */
  private readonly numbers: number[];
  /** The fundamental (radians per sample) as followed block to block, and where the detector put it. */
  private fundamental: number;
  private readonly measured: number;
  /** Samples per period of the hum's fundamental: the stretch the fit's weights are measured over. */
  private readonly period: number;
  /** Input, and the fitted hum's weighted sum and the sum of its weights, from sample `base` on. */
  private input: Float64Array;
  private humSum: Float64Array;
  private weightSum: Float64Array;
  private base = 0;
  private received = 0;
  private emitted = 0;
  /** Where the next regular block starts. */
  private nextBlock = 0;
  private output = new Float32Array(0);
  /** Emission's view of the zero run it is in: zeros emitted so far, where it ends (a sample index), whether it is silence. */
  private zerosBefore = 0;
  private silentUntil = 0;
  private silentRun = false;
  private readonly fit: Float64Array;
  private readonly fitWeights: Float64Array;
  /** How far the followed fundamental may stray from the detector's (radians per sample). */
  private readonly maxWander: number;

  constructor(sampleRate: number, hum: Pick<HumReport, 'fundamentalHz' | 'harmonicsHz'>, blockSeconds = BLOCK_SECONDS) {
    this.hop = Math.max(1, Math.round((blockSeconds * sampleRate) / 2));
    this.size = 2 * this.hop;
    // sin^2: as the fit's window it is a Hann window; as the cross-fade, w[n] + w[n + hop] = 1.
    this.window = hann(this.size);
    // Without a fundamental there is no hum to subtract (no harmonics; the period is then never used).
    const fundamentalHz = hum.fundamentalHz ?? sampleRate;
    this.numbers =
      hum.fundamentalHz === null
        ? []
        : hum.harmonicsHz
            .filter((hz) => hz > 0 && hz < sampleRate / 2 - MAX_WANDER_HZ * HARMONIC_LIMIT)
            .map((hz) => Math.round(hz / fundamentalHz));
    this.fundamental = this.measured = (2 * Math.PI * fundamentalHz) / sampleRate;
    this.maxWander = (2 * Math.PI * MAX_WANDER_HZ) / sampleRate;
    this.period = Math.max(1, Math.round(sampleRate / fundamentalHz));
    this.input = new Float64Array(2 * this.size);
    this.humSum = new Float64Array(2 * this.size);
    this.weightSum = new Float64Array(2 * this.size);
    this.fit = new Float64Array(this.size);
    this.fitWeights = new Float64Array(this.size);
  }

  /** Takes `frames` samples; returns the output ready so far (a view, valid until the next call). */
  push(samples: Float32Array, frames: number): Float32Array {
    if (this.numbers.length === 0) return this.pass(samples.subarray(0, frames));
    this.append(samples, frames);
    while (this.nextBlock + this.size <= this.received) {
      // The first block has no block before it to cross-fade with: its fit alone counts up to its centre.
      this.addBlock(this.nextBlock, this.size, this.nextBlock === 0 ? flatBefore(this.window, this.hop) : this.window);
      this.nextBlock += this.hop;
    }
    return this.emit(Math.min(this.received, this.nextBlock));
  }

  /** The rest of the output, up to the input's length. */
  flush(): Float32Array {
    if (this.numbers.length === 0) return new Float32Array(0);
    const end = this.received;
    if (end < this.size) {
      // Shorter than a block: one fit over all of it, if it is long enough to tell the harmonics apart.
      if (end >= this.hop) {
        const window = hann(end);
        this.addBlock(0, end, window, window);
      }
    } else if (this.nextBlock + this.hop < end) {
      // A block ending with the input covers the tail the last regular block left; its fit alone counts
      // after its centre.
      this.addBlock(end - this.size, this.size, flatAfter(this.window, this.hop));
    }
    return this.emit(end);
  }

  /**
   * Fits the hum over [start, start + length), under `window` (Hann: its side lobes keep the harmonics'
   * fits apart), and adds it, cross-faded by `fade`, to the running sum.
   */
  private addBlock(start: number, length: number, fade: Float64Array, window = this.window): void {
    const offset = start - this.base;
    const x = this.input.subarray(offset, offset + length);
    const silent = digitalSilence(x, length);
    this.weighByQuiet(x, window, silent, length);
    // What is subtracted is a steady tone per harmonic: half the freedom of the drifting fit, so half as
    // much of the voice is taken for hum (5 s clips under hum: 18-29 dB against 17-28 dB). The drifting
    // fits, made in the same pass, say where mains has moved: their phases turn across the block. When
    // the highest harmonic turns by more than REFIT_RADIANS, the tones are fitted again at the fundamental
    // they point to, which the next blocks start from (with a voice over the hum, most blocks are).
    let fits = this.numbers.map((h) => fitTones(h * this.fundamental, x, this.fitWeights, length));
    const drift = fundamentalDrift(
      fits.map((fit) => fit.drifting),
      this.numbers,
      length,
    );
    if (Math.abs(drift) * length * Math.max(...this.numbers) > REFIT_RADIANS) {
      const wander = this.fundamental + drift - this.measured;
      this.fundamental = this.measured + Math.max(-this.maxWander, Math.min(this.maxWander, wander));
      fits = this.numbers.map((h) => fitTones(h * this.fundamental, x, this.fitWeights, length));
    }
    this.fit.fill(0, 0, length);
    this.numbers.forEach((h, i) => addTone(h * this.fundamental, fits[i].steady, length, this.fit));
    for (let n = 0; n < length; n++) {
      this.humSum[offset + n] += fade[n] * this.fit[n];
      this.weightSum[offset + n] += fade[n];
    }
  }

  /**
   * Sets the fit's weights: `window` over the signal's power (SPAN_PERIODS periods of the hum, the
   * weights interpolated linearly between the spans' centres), floored at a thousandth of the block's
   * median power; 0 on digital silence.
   */
  private weighByQuiet(x: Float64Array, window: Float64Array, silent: Uint8Array, length: number): void {
    const spanSamples = SPAN_PERIODS * this.period;
    const spans: number[] = [];
    for (let start = 0; start < length; start += spanSamples) {
      const end = Math.min(length, start + spanSamples);
      let sum = 0;
      for (let n = start; n < end; n++) sum += x[n] * x[n];
      spans.push(sum / (end - start));
    }
    const floor = Math.max(QUIET_FLOOR, 1e-3 * median(spans));
    const weights = spans.map((power) => 1 / Math.max(floor, power));
    for (let n = 0; n < length; n++) {
      const position = Math.max(0, Math.min(weights.length - 1, (n + 0.5) / spanSamples - 0.5));
      const i = Math.floor(position);
      const weight = i + 1 < weights.length ? weights[i] + (position - i) * (weights[i + 1] - weights[i]) : weights[i];
      this.fitWeights[n] = silent[n] ? 0 : window[n] * weight;
    }
  }

  private append(samples: Float32Array, frames: number): void {
    if (this.received + frames - this.base > this.input.length) {
      // Keep the last regular block's second half on (all that is not emitted yet, and what a closing
      // block may reach back into).
      const keepFrom = Math.max(this.base, this.nextBlock - this.hop);
      const kept = this.received - keepFrom;
      const length = Math.max(this.input.length, 2 * (kept + frames));
      const from = keepFrom - this.base;
      this.input = moved(this.input, from, kept, length);
      this.humSum = moved(this.humSum, from, kept, length);
      this.weightSum = moved(this.weightSum, from, kept, length);
      this.base = keepFrom;
    }
    const offset = this.received - this.base;
    for (let i = 0; i < frames; i++) this.input[offset + i] = samples[i];
    this.received += frames;
  }

  /** Input less the fitted hum, from what was emitted up to `until`; digital silence stays as it is. */
  private emit(until: number): Float32Array {
    const count = until - this.emitted;
    if (this.output.length < count) this.output = new Float32Array(count);
    const from = this.emitted - this.base;
    for (let i = 0; i < count; i++) {
      const at = from + i;
      const weight = this.weightSum[at];
      this.output[i] = this.inSilence(at) ? 0 : this.input[at] - (weight > 0 ? this.humSum[at] / weight : 0);
    }
    this.emitted = until;
    return this.output.subarray(0, count);
  }

  /**
   * Whether buffer position `at` (emitted in order) lies in a run of SILENT_RUN exact zeros or more. The
   * run is measured from its first zero (counted as emission passes it) to its last: at least a hop of
   * input lies beyond what is emitted, more than any run needs.
   */
  private inSilence(at: number): boolean {
    if (this.input[at] !== 0) {
      this.zerosBefore = 0;
      return false;
    }
    if (this.base + at >= this.silentUntil) {
      let end = at;
      while (end < this.received - this.base && this.input[end] === 0) end++;
      this.silentUntil = this.base + end;
      this.silentRun = this.zerosBefore + (end - at) >= SILENT_RUN;
    }
    this.zerosBefore++;
    return this.silentRun;
  }

  private pass(samples: Float32Array): Float32Array {
    this.received += samples.length;
    this.emitted = this.received;
    return samples;
  }
}

/**
 * Weighted least-squares fits to `x` at `omega`, n' and t (-0.5..0.5) counted from the block's centre:
 * the steady tone a cos(omega n') + c sin(omega n') as [a, c], and the drifting one
 * (a + b t) cos(omega n') + (c + d t) sin(omega n') as [a, c, b, d]. One pass makes the sums of both.
 */
function fitTones(
  omega: number,
  x: Float64Array,
  weights: Float64Array,
  length: number,
): { steady: [number, number]; drifting: number[] } {
  const centre = (length - 1) / 2;
  const stepC = Math.cos(omega);
  const stepS = Math.sin(omega);
  // The normal equations of the basis (c, s, tc, ts): nine distinct sums, and the projections of x.
  let [cc, cs, ss, tcc, tcs, tss, ttcc, ttcs, ttss] = [0, 0, 0, 0, 0, 0, 0, 0, 0];
  let [xc, xs, xtc, xts] = [0, 0, 0, 0];
  // The phasor is turned a sample at a time, in double precision (a block's rounding stays under 1e-9).
  let c = Math.cos(-omega * centre);
  let s = Math.sin(-omega * centre);
  for (let n = 0; n < length; n++) {
    const w = weights[n];
    const t = (n - centre) / length;
    const wcc = w * c * c;
    const wcs = w * c * s;
    const wss = w * s * s;
    cc += wcc;
    cs += wcs;
    ss += wss;
    tcc += t * wcc;
    tcs += t * wcs;
    tss += t * wss;
    ttcc += t * t * wcc;
    ttcs += t * t * wcs;
    ttss += t * t * wss;
    const wx = w * x[n];
    xc += wx * c;
    xs += wx * s;
    xtc += wx * t * c;
    xts += wx * t * s;
    const next = c * stepC - s * stepS;
    s = s * stepC + c * stepS;
    c = next;
  }
  const determinant = cc * ss - cs * cs;
  const steady: [number, number] =
    determinant > 1e-12 * cc * ss ? [(ss * xc - cs * xs) / determinant, (cc * xs - cs * xc) / determinant] : [0, 0];
  const drifting = solve4(
    [
      [cc, cs, tcc, tcs],
      [cs, ss, tcs, tss],
      [tcc, tcs, ttcc, ttcs],
      [tcs, tss, ttcs, ttss],
    ],
    [xc, xs, xtc, xts],
  );
  return { steady, drifting };
}

/** Adds the steady tone [a, c] of fitTones to `fit`. */
function addTone(omega: number, [a, b]: [number, number], length: number, fit: Float64Array): void {
  const centre = (length - 1) / 2;
  const stepC = Math.cos(omega);
  const stepS = Math.sin(omega);
  let c = Math.cos(-omega * centre);
  let s = Math.sin(-omega * centre);
  for (let n = 0; n < length; n++) {
    fit[n] += a * c + b * s;
    const next = c * stepC - s * stepS;
    s = s * stepC + c * stepS;
    c = next;
  }
}

/**
 * How far the fundamental (radians per sample) lies from the one the harmonics were fitted at, from how
 * their phases turn across the block: harmonic h's complex amplitude goes Z0 + Z1 t, and a frequency
 * off by d turns it by d * length per unit of t, h times the fundamental's offset; the harmonics are
 * weighed by h^2 |Z0|^2 (the louder and the higher tell it more precisely).
 */
function fundamentalDrift(fits: number[][], numbers: number[], length: number): number {
  let turn = 0;
  let weight = 0;
  fits.forEach(([a, b, tA, tB], i) => {
    const h = numbers[i];
    // Z0 = a - jb, Z1 = tA - j tB: Im(Z1 conj(Z0)) = tA b - tB a.
    turn += h * (tA * b - tB * a);
    weight += h * h * (a * a + b * b);
  });
  return weight > 0 ? turn / weight / length : 0;
}

/** Solves a 4x4 system by Gaussian elimination with partial pivoting; a singular one gives zeros (no fit). */
function solve4(matrix: number[][], vector: number[]): number[] {
  const rows = matrix.map((row, i) => [...row, vector[i]]);
  const scale = Math.max(...rows.map((row) => Math.max(...row.slice(0, 4).map(Math.abs))));
  for (let col = 0; col < 4; col++) {
    let pivot = col;
    for (let row = col + 1; row < 4; row++) if (Math.abs(rows[row][col]) > Math.abs(rows[pivot][col])) pivot = row;
    if (!(Math.abs(rows[pivot][col]) > 1e-12 * scale)) return [0, 0, 0, 0];
    [rows[col], rows[pivot]] = [rows[pivot], rows[col]];
    for (let row = col + 1; row < 4; row++) {
      const factor = rows[row][col] / rows[col][col];
      for (let k = col; k <= 4; k++) rows[row][k] -= factor * rows[col][k];
    }
  }
  const solution = [0, 0, 0, 0];
  for (let row = 3; row >= 0; row--) {
    let sum = rows[row][4];
    for (let k = row + 1; k < 4; k++) sum -= rows[row][k] * solution[k];
    solution[row] = sum / rows[row][row];
  }
  return solution;
}

/** Marks the samples in runs of at least SILENT_RUN exact zeros. */
function digitalSilence(x: Float64Array, length: number): Uint8Array {
  const silent = new Uint8Array(length);
  let runStart = 0;
  for (let n = 0; n <= length; n++) {
    if (n < length && x[n] === 0) continue;
    if (n - runStart >= SILENT_RUN) silent.fill(1, runStart, n);
    runStart = n + 1;
  }
  return silent;
}

function hann(length: number): Float64Array {
  return Float64Array.from({ length }, (_, n) => Math.sin((Math.PI * (n + 0.5)) / length) ** 2);
}

function flatBefore(window: Float64Array, hop: number): Float64Array {
  return Float64Array.from(window).fill(1, 0, hop);
}

function flatAfter(window: Float64Array, hop: number): Float64Array {
  return Float64Array.from(window).fill(1, hop);
}

/** `count` values of `array` from `from`, at the start of an array of `length` (the same one if it is long enough), zeros after. */
function moved(array: Float64Array, from: number, count: number, length: number): Float64Array {
  if (length > array.length) {
    const bigger = new Float64Array(length);
    bigger.set(array.subarray(from, from + count));
    return bigger;
  }
  array.copyWithin(0, from, from + count);
  array.fill(0, count);
  return array;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
