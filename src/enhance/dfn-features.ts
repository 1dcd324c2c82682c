// DeepFilterNet3's two inputs, computed per spectrum as its training did (the paper and config.ini):
//   - ERB features: the power in each of 32 ERB-scale bands, in dB, minus a running mean, / 40;
//   - complex features: the lowest 96 bins divided by the square root of a running mean magnitude.
// Both running means are exponential with alpha 0.99 (a time constant of 1 s at 100 frames a second).
import { BINS, DFN_RATE, FFT_SIZE, HOP } from './dfn-frames';

export const ERB_BANDS = 32;
/** Bins the deep filter works on (0 to 4.8 kHz). */
export const DF_BINS = 96;
const MIN_BINS_PER_BAND = 2;
/** exp(-hop / (rate * tau)) with tau = 1 s, rounded to 3 decimals as the model's own code does. */
export const NORM_ALPHA = Math.round(Math.exp(-HOP / DFN_RATE / 1) * 1000) / 1000;

const hzToErb = (hz: number) => 9.265 * Math.log1p(hz / (24.7 * 9.265));
const erbToHz = (erb: number) => 24.7 * 9.265 * (Math.exp(erb / 9.265) - 1);

/** Widths in bins of the ERB bands: equal steps on the ERB scale, at least 2 bins each, BINS in all. */
export function erbBandWidths(): number[] {
  const binHz = DFN_RATE / FFT_SIZE;
  const step = hzToErb(DFN_RATE / 2) / ERB_BANDS;
  const widths: number[] = [];
  let previousBin = 0;
  let borrowed = 0; // bins a too-narrow band took from the next
  for (let band = 1; band <= ERB_BANDS; band++) {
    const edge = Math.round(erbToHz(band * step) / binHz);
    let width = edge - previousBin - borrowed;
    borrowed = width < MIN_BINS_PER_BAND ? MIN_BINS_PER_BAND - width : 0;
    width = Math.max(width, MIN_BINS_PER_BAND);
    widths.push(width);
    previousBin = edge;
  }
  widths[ERB_BANDS - 1] += 1; // the Nyquist bin
  widths[ERB_BANDS - 1] -= widths.reduce((a, b) => a + b, 0) - BINS;
  return widths;
}

export const ERB_WIDTHS = erbBandWidths();

/** The running normalisations of one channel, carried from spectrum to spectrum. */
export class FeatureExtractor {
  /** Running mean of the band powers (dB), starting at a ramp from -60 to -90 dB. */
  private readonly meanDb = ramp(-60, -90, ERB_BANDS);
  /** Running mean of the low bins' magnitudes, starting at a ramp from 1e-3 to 1e-4. */
  private readonly meanMagnitude = ramp(1e-3, 1e-4, DF_BINS);

  /**
   * Runs the running means over `spectra` without making features: a stream's first features then see
   * means that fit its own level, not the fixed start values (see PRIME_FRAMES in dfn-stream.ts).
   */
  settle(spectra: Iterable<Float32Array>): void {
    const [erb, re, im] = [new Float32Array(ERB_BANDS), new Float32Array(DF_BINS), new Float32Array(DF_BINS)];
    for (const spectrum of spectra) this.push(spectrum, erb, re, im);
  }

  /** From one spectrum (interleaved re, im), writes ERB_BANDS values to `erb` and DF_BINS re and im to `re`, `im`. */
  push(spectrum: Float32Array, erb: Float32Array, re: Float32Array, im: Float32Array): void {
    let bin = 0;
    for (let band = 0; band < ERB_BANDS; band++) {
      const width = ERB_WIDTHS[band];
      let power = 0;
      for (let end = bin + width; bin < end; bin++) power += spectrum[2 * bin] ** 2 + spectrum[2 * bin + 1] ** 2;
      const db = 10 * Math.log10(power / width + 1e-10);
      this.meanDb[band] = db * (1 - NORM_ALPHA) + this.meanDb[band] * NORM_ALPHA;
      erb[band] = (db - this.meanDb[band]) / 40;
    }
    for (let k = 0; k < DF_BINS; k++) {
      const x = spectrum[2 * k];
      const y = spectrum[2 * k + 1];
      this.meanMagnitude[k] = Math.hypot(x, y) * (1 - NORM_ALPHA) + this.meanMagnitude[k] * NORM_ALPHA;
      const scale = 1 / Math.sqrt(this.meanMagnitude[k]);
      re[k] = x * scale;
      im[k] = y * scale;
    }
  }
}

function ramp(from: number, to: number, count: number): Float64Array {
  const values = new Float64Array(count);
  for (let i = 0; i < count; i++) values[i] = from + ((to - from) * i) / (count - 1);
  return values;
}
