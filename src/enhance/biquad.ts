// Biquad sections for the enhancement chain's filters, derived for the file's own rate by the bilinear
// transform (corners prewarped, so they land where asked at any rate), run in direct form II
// transposed with double-precision state. One cascade per channel: the state is the channel's.

/** Normalised coefficients (a0 = 1). */
export interface BiquadCoefficients {
  b0: number;
  b1: number;
  b2: number;
  a1: number;
  a2: number;
}

export class Biquad {
  private z1 = 0;
  private z2 = 0;

  constructor(
    readonly coefficients: BiquadCoefficients,
    readonly sampleRate: number,
  ) {}

  /** Filters samples [0, frames) in place. */
  process(samples: Float32Array, frames: number): void {
    const { b0, b1, b2, a1, a2 } = this.coefficients;
    let { z1, z2 } = this;
    for (let i = 0; i < frames; i++) {
      const x = samples[i];
      const y = b0 * x + z1;
      z1 = b1 * x - a1 * y + z2;
      z2 = b2 * x - a2 * y;
      samples[i] = y;
    }
    this.z1 = z1;
    this.z2 = z2;
  }

  /** The designed gain at a frequency (linear), for checking a design against its promise. */
  magnitudeAt(frequencyHz: number): number {
    const { b0, b1, b2, a1, a2 } = this.coefficients;
    const w = (2 * Math.PI * frequencyHz) / this.sampleRate;
    const [c1, s1, c2, s2] = [Math.cos(w), Math.sin(w), Math.cos(2 * w), Math.sin(2 * w)];
    const numerator = Math.hypot(b0 + b1 * c1 + b2 * c2, b1 * s1 + b2 * s2);
    const denominator = Math.hypot(1 + a1 * c1 + a2 * c2, a1 * s1 + a2 * s2);
    return numerator / denominator;
  }
}

/** Sections run one after another, on one channel. */
export class FilterCascade {
  constructor(readonly sections: Biquad[]) {}

  process(samples: Float32Array, frames: number): void {
    for (const section of this.sections) section.process(samples, frames);
  }

  magnitudeAt(frequencyHz: number): number {
    return this.sections.reduce((gain, section) => gain * section.magnitudeAt(frequencyHz), 1);
  }
}

/** Butterworth high-pass of an even order, as order/2 second-order sections. */
export function highPass(sampleRate: number, cornerHz: number, order: number): FilterCascade {
  return butterworth(sampleRate, cornerHz, order, 'high');
}

/** Butterworth low-pass of an even order, as order/2 second-order sections. */
export function lowPass(sampleRate: number, cornerHz: number, order: number): FilterCascade {
  return butterworth(sampleRate, cornerHz, order, 'low');
}

function butterworth(sampleRate: number, cornerHz: number, order: number, kind: 'low' | 'high'): FilterCascade {
  if (order < 2 || order % 2 !== 0) throw new RangeError(`Butterworth order must be even and at least 2, not ${order}`);
  const k = Math.tan((Math.PI * cornerHz) / sampleRate);
  const sections: Biquad[] = [];
  for (let pair = 0; pair < order / 2; pair++) {
    // The pole pairs of a Butterworth filter, each a second-order section of its own Q.
    const q = 1 / (2 * Math.sin((Math.PI * (2 * pair + 1)) / (2 * order)));
    const norm = 1 / (1 + k / q + k * k);
    const b0 = kind === 'low' ? k * k * norm : norm;
    sections.push(
      new Biquad(
        {
          b0,
          b1: kind === 'low' ? 2 * b0 : -2 * b0,
          b2: b0,
          a1: 2 * (k * k - 1) * norm,
          a2: (1 - k / q + k * k) * norm,
        },
        sampleRate,
      ),
    );
  }
  return new FilterCascade(sections);
}
