// Sample-rate conversion for the live microphone page, in the browser's audio thread: a Kaiser-windowed
// sinc evaluated at any position, so one class takes the microphone from the AudioContext's rate (44.1 or
// 48 kHz, whatever the device gives) down to 16 kHz behind a proper anti-alias filter, and the cleaned
// voice back up. Output sample j is the band-limited input at position j * step (step = input rate /
// output rate): zero phase, so a sample's time is known exactly, and the filter's reach (`reach`, in
// input samples) is the only wait it adds.
// Plain TypeScript with no imports: it runs in an AudioWorklet, and in Node for its tests.

export interface SincOptions {
  /** Flat up to here (Hz). */
  passHz: number;
  /** At least `attenuationDb` down from here on (Hz); 16 kHz output has nothing above 8 kHz to keep. */
  stopHz: number;
  attenuationDb: number;
}

/**
 * The band kept between a rate and the lower `rate` it meets: flat to 0.9 of that rate's Nyquist frequency,
 * 70 dB down at it, so nothing folds back into the band (for 16 kHz: flat to 7.2 kHz, 70 dB down by 8 kHz).
 */
export function speechBand(rate: number): SincOptions {
  return { passHz: 0.45 * rate, stopHz: 0.5 * rate, attenuationDb: 70 };
}

/** Table points per input sample; linear interpolation between them errs under -80 dB. */
const OVERSAMPLING = 128;

export class SincResampler {
  /** Input samples each side of a position that the filter reads. */
  readonly reach: number;
  /** Input samples consumed per output sample. */
  readonly step: number;
  private readonly table: Float32Array;
  /** Input kept: buffer[0] is input sample `first` (negative at the start: zeros before the first sample). */
  private buffer: Float32Array;
  private first: number;
  private length = 0;
  /** Position of the next output, in input samples. */
  private at = 0;

  constructor(
    readonly inputRate: number,
    readonly outputRate: number,
    options: SincOptions = speechBand(Math.min(inputRate, outputRate)),
  ) {
    this.step = inputRate / outputRate;
    const cutoff = (options.passHz + options.stopHz) / 2 / inputRate;
    const transition = (options.stopHz - options.passHz) / inputRate;
    // Kaiser's formulas for the window's shape and the filter's length at this attenuation and transition.
    const a = options.attenuationDb;
    const beta = a > 50 ? 0.1102 * (a - 8.7) : a >= 21 ? 0.5842 * (a - 21) ** 0.4 + 0.07886 * (a - 21) : 0;
    this.reach = Math.ceil((a - 8) / (2.285 * 2 * Math.PI * transition) / 2);
    this.table = new Float32Array(this.reach * OVERSAMPLING + 2);
    const i0Beta = besselI0(beta);
    for (let i = 0; i < this.table.length; i++) {
      const u = i / OVERSAMPLING;
      const ratio = u / this.reach;
      const window = ratio >= 1 ? 0 : besselI0(beta * Math.sqrt(1 - ratio * ratio)) / i0Beta;
      const x = 2 * cutoff * u;
      this.table[i] = 2 * cutoff * (x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x)) * window;
    }
    this.buffer = new Float32Array(4096);
    // Silence before the first sample, so that the first output is at its position 0.
    this.first = -this.reach;
    this.length = this.reach;
  }

  /** The input position of the next output sample. */
  get position(): number {
    return this.at;
  }

  /** Input samples pushed so far (their positions are 0 up to this). */
  get pushed(): number {
    return this.first + this.length;
  }

  /** Input samples still to push before `count` more outputs can be made. */
  needed(count: number): number {
    // Stepped as pull() steps, addition by addition: a product could round to the other side of a sample.
    let last = this.at;
    for (let i = 1; i < count; i++) last += this.step;
    return Math.max(0, Math.ceil(last + this.reach + 1 - this.pushed));
  }

  push(samples: Float32Array): void {
    // Drop what no output will read again, then make room.
    const keepFrom = Math.floor(this.at) - this.reach - 1;
    if (keepFrom > this.first) {
      const drop = Math.min(this.length, keepFrom - this.first);
      this.buffer.copyWithin(0, drop, this.length);
      this.first += drop;
      this.length -= drop;
    }
    if (this.length + samples.length > this.buffer.length) {
      const grown = new Float32Array(2 * (this.length + samples.length));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    this.buffer.set(samples, this.length);
    this.length += samples.length;
  }

  /** Writes as many outputs as the input allows, up to `out.length`; returns how many. */
  pull(out: Float32Array): number {
    const step = this.step;
    const table = this.table;
    const buffer = this.buffer;
    const reach = this.reach;
    let made = 0;
    while (made < out.length && this.at + reach + 1 <= this.pushed) {
      const at = this.at;
      const from = Math.ceil(at - reach);
      const to = Math.floor(at + reach);
      let sum = 0;
      for (let n = from; n <= to; n++) {
        const u = Math.abs(at - n) * OVERSAMPLING;
        const i = u | 0;
        const weight = table[i] + (u - i) * (table[i + 1] - table[i]);
        sum += buffer[n - this.first] * weight;
      }
      out[made++] = sum;
      this.at += step;
    }
    return made;
  }
}

/** The modified Bessel function of the first kind, order 0, by its series. */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; term > 1e-12 * sum; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
  }
  return sum;
}
