// ITU-R BS.1770-4 K-weighting for any sample rate: the standard tabulates the two biquads only at
// 48 kHz; here they are derived from their analog prototypes (a high shelf near 1.7 kHz and a high-pass
// near 38 Hz) with the bilinear transform, which reproduces the 48 kHz table to 1e-8.

export interface Biquad {
  b0: number;
  b1: number;
  b2: number;
  a1: number;
  a2: number;
}

// The prototypes' parameters, fitted to the 48 kHz table.
const SHELF = {
  f0: 1681.974450955533,
  gainDb: 3.999843853973347,
  q: 0.7071752369554196,
  bandwidthExponent: 0.4996667741545416,
};
const HIGH_PASS = { f0: 38.13547087602444, q: 0.5003270373238773 };

export function kWeightingFilters(sampleRate: number): [Biquad, Biquad] {
  const k1 = Math.tan((Math.PI * SHELF.f0) / sampleRate);
  const vh = 10 ** (SHELF.gainDb / 20);
  const vb = vh ** SHELF.bandwidthExponent;
  const d1 = 1 + k1 / SHELF.q + k1 * k1;
  const shelf: Biquad = {
    b0: (vh + (vb * k1) / SHELF.q + k1 * k1) / d1,
    b1: (2 * (k1 * k1 - vh)) / d1,
    b2: (vh - (vb * k1) / SHELF.q + k1 * k1) / d1,
    a1: (2 * (k1 * k1 - 1)) / d1,
    a2: (1 - k1 / SHELF.q + k1 * k1) / d1,
  };
  const k2 = Math.tan((Math.PI * HIGH_PASS.f0) / sampleRate);
  const d2 = 1 + k2 / HIGH_PASS.q + k2 * k2;
  const highPass: Biquad = {
    b0: 1,
    b1: -2,
    b2: 1,
    a1: (2 * (k2 * k2 - 1)) / d2,
    a2: (1 - k2 / HIGH_PASS.q + k2 * k2) / d2,
  };
  return [shelf, highPass];
}

/** One channel's K-weighting state: both biquads in direct form I, in double precision. */
export class KWeighting {
  private readonly s: Biquad;
  private readonly h: Biquad;
  private x1 = 0;
  private x2 = 0;
  private y1 = 0;
  private y2 = 0;
  private z1 = 0;
  private z2 = 0;

  constructor(sampleRate: number) {
    [this.s, this.h] = kWeightingFilters(sampleRate);
  }

  /** Filters samples [from, to) and returns the sum of their squares after weighting. */
  sumOfSquares(samples: Float32Array, from: number, to: number): number {
    const { b0, b1, b2, a1, a2 } = this.s;
    const { a1: c1, a2: c2 } = this.h;
    let { x1, x2, y1, y2, z1, z2 } = this;
    let sum = 0;
    for (let i = from; i < to; i++) {
      const x = samples[i];
      const y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
      // The high-pass's numerator is 1, -2, 1.
      const z = y - 2 * y1 + y2 - c1 * z1 - c2 * z2;
      x2 = x1;
      x1 = x;
      y2 = y1;
      y1 = y;
      z2 = z1;
      z1 = z;
      sum += z * z;
    }
    Object.assign(this, { x1, x2, y1, y2, z1, z2 });
    return sum;
  }
}
