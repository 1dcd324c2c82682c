// DeepFilterNet3's outputs applied to one spectrum (the paper, section 2): the ERB gains, spread over
// the bins of each band, scale the whole spectrum; then the lowest DF_BINS bins are replaced by the
// deep filter, a complex FIR over time of DF_ORDER taps on the noisy spectra from DF_LOOKAHEAD frames
// before to DF_LOOKAHEAD frames after. An attenuation cap keeps that share of the noisy spectrum
// (DeepFilterNet's own attenuation limit): the two are the same frame, so the mix shifts no phase.
import { BINS } from './dfn-frames';
import { DF_BINS, ERB_BANDS, ERB_WIDTHS } from './dfn-features';
import { DF_ORDER } from './dfn-model';

/** The deep filter's taps reach this many frames into the future (config.ini: df_lookahead). */
export const DF_LOOKAHEAD = 2;

/** The share of the noisy spectrum kept so that noise is pulled down by at most `capDb` (Infinity: no cap). */
export function keptShare(capDb: number): number {
  return Number.isFinite(capDb) ? 10 ** (-capDb / 20) : 0;
}

/**
 * Writes the enhanced spectrum of frame t to `out` (interleaved, 2 * BINS values). `noisy[o]` is the
 * noisy spectrum of frame t - DF_LOOKAHEAD + o (o = 0..DF_ORDER-1; a zero spectrum past either end);
 * `mask` holds ERB_BANDS gains and `coefs` DF_BINS x DF_ORDER complex taps, both for frame t.
 */
export function applyDfnOutputs(
  noisy: readonly Float32Array[],
  mask: Float32Array,
  coefs: Float32Array,
  kept: number,
  out: Float32Array,
): void {
  const current = noisy[DF_LOOKAHEAD];
  let bin = 0;
  for (let band = 0; band < ERB_BANDS; band++) {
    const gain = mask[band];
    for (let end = bin + ERB_WIDTHS[band]; bin < end; bin++) {
      out[2 * bin] = current[2 * bin] * gain;
      out[2 * bin + 1] = current[2 * bin + 1] * gain;
    }
  }
  for (let k = 0; k < DF_BINS; k++) {
    let re = 0;
    let im = 0;
    for (let tap = 0; tap < DF_ORDER; tap++) {
      const x = noisy[tap];
      const a = x[2 * k];
      const b = x[2 * k + 1];
      const c = coefs[(k * DF_ORDER + tap) * 2];
      const d = coefs[(k * DF_ORDER + tap) * 2 + 1];
      re += a * c - b * d;
      im += a * d + b * c;
    }
    out[2 * k] = re;
    out[2 * k + 1] = im;
  }
  if (kept > 0) for (let i = 0; i < 2 * BINS; i++) out[i] = kept * current[i] + (1 - kept) * out[i];
}
