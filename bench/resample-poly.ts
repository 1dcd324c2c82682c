// Rational-ratio resampling for the benchmark's metrics (STOI works at 10 kHz, DNSMOS at 16 kHz), as
// Octave's `resample` and pystoi do it: upsample by p, a Kaiser-windowed sinc low-pass (60 dB rejection,
// transition a tenth of the cutoff), downsample by q, the filter's delay removed so output and input align.

const REJECTION_DB = 60;

/** `signal` at `toRate` instead of `fromRate` (both integers); ceil(length * p / q) samples. */
export function resamplePoly(signal: Float32Array, fromRate: number, toRate: number): Float32Array {
  if (!Number.isInteger(fromRate) || !Number.isInteger(toRate) || fromRate <= 0 || toRate <= 0)
    throw new Error(`resamplePoly: rates must be positive integers, got ${fromRate} -> ${toRate}`);
  if (fromRate === toRate) return signal.slice();
  const divisor = gcd(fromRate, toRate);
  const up = toRate / divisor;
  const down = fromRate / divisor;
  const taps = lowPass(up, down);
  const half = (taps.length - 1) / 2;
  const out = new Float32Array(Math.ceil((signal.length * up) / down));
  for (let m = 0; m < out.length; m++) {
    // Output m sits at position m*down (+ the filter's delay) of the upsampled signal, whose nonzero
    // samples are x[n] at n*up: sum x[n] * taps[m*down + half - n*up] over the taps in range.
    const centre = m * down + half;
    const first = Math.max(0, Math.ceil((centre - (taps.length - 1)) / up));
    const last = Math.min(signal.length - 1, Math.floor(centre / up));
    let sum = 0;
    for (let n = first; n <= last; n++) sum += signal[n] * taps[centre - n * up];
    out[m] = sum * up;
  }
  return out;
}

/** The anti-aliasing filter for p/q, normalised to unit DC gain (before the factor p of zero-stuffing). */
function lowPass(up: number, down: number): Float64Array {
  const cutoff = 1 / (2 * Math.max(up, down));
  const rollOff = cutoff / 10;
  const half = Math.ceil((REJECTION_DB - 8) / (28.714 * rollOff));
  const beta = 0.1102 * (REJECTION_DB - 8.7);
  const taps = new Float64Array(2 * half + 1);
  let sum = 0;
  for (let i = 0; i < taps.length; i++) {
    const t = i - half;
    const sinc = t === 0 ? 1 : Math.sin(2 * Math.PI * cutoff * t) / (2 * Math.PI * cutoff * t);
    const ratio = t / half;
    taps[i] = (bessel0(beta * Math.sqrt(1 - ratio * ratio)) / bessel0(beta)) * 2 * up * cutoff * sinc;
    sum += taps[i];
  }
  return taps.map((tap) => tap / sum);
}

/** Modified Bessel function of the first kind, order 0 (its power series), for the Kaiser window. */
function bessel0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < sum * 1e-16) break;
  }
  return sum;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
