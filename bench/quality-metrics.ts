// Speech-quality measures for the enhancement benchmark, computed here in TypeScript: segmental SNR,
// SI-SDR and its segmental form, the noise floor in speech pauses, and a magnitude-spectrum segmental SNR
// that no phase moves.
// Each measure takes an output already aligned to its reference (`align`: once per output).

const FRAME_SECONDS = 0.01;
const SEG_MIN_DB = -10;
const SEG_MAX_DB = 35;
/** A reference frame this far under the loudest one counts as silent (skipped, or a pause). */
const SILENT_DB = 40;
/** afftdn delays its output by about 25 ms; the search covers twice that. */
const MAX_LAG_SECONDS = 0.05;

const dot = (a: Float32Array, b: Float32Array, offset = 0) => {
  let sum = 0;
  for (let i = Math.max(0, -offset); i < a.length && i + offset < b.length; i++) sum += a[i] * b[i + offset];
  return sum;
};

function frameEnergies(signal: Float32Array, frame: number): Float64Array {
  const energies = new Float64Array(Math.floor(signal.length / frame));
  for (let k = 0; k < energies.length; k++) {
    let sum = 0;
    for (let i = k * frame; i < (k + 1) * frame; i++) sum += signal[i] * signal[i];
    energies[k] = sum;
  }
  return energies;
}

/** `output` shifted to the lag (within ±50 ms) where it best matches `reference`, and scaled by least squares. */
export function align(reference: Float32Array, output: Float32Array, sampleRate: number): Float32Array {
  const range = Math.round(MAX_LAG_SECONDS * sampleRate);
  // The lag is searched on the loudest second, every 4th sample: enough to find it, cheap to compute.
  const excerpt = loudestSecond(reference, sampleRate);
  let best = -Infinity;
  let lag = 0;
  for (let d = -range; d <= range; d++) {
    let sum = 0;
    for (let i = excerpt; i < excerpt + sampleRate && i + d < output.length; i += 4)
      if (i + d >= 0) sum += reference[i] * output[i + d];
    if (sum > best) [best, lag] = [sum, d];
  }
  const shifted = new Float32Array(reference.length);
  for (let i = 0; i < shifted.length; i++) shifted[i] = output[i + lag] ?? 0;
  const gain = dot(reference, shifted) / dot(shifted, shifted);
  return shifted.map((value) => value * gain);
}

function loudestSecond(signal: Float32Array, sampleRate: number): number {
  const energies = frameEnergies(signal, sampleRate);
  return sampleRate * energies.indexOf(Math.max(...energies));
}

/** Mean over the reference's non-silent 10 ms frames of their SNR, each clamped to -10..35 dB. */
export function segmentalSnr(reference: Float32Array, aligned: Float32Array, sampleRate: number): number {
  const frame = Math.round(FRAME_SECONDS * sampleRate);
  return meanSegmentSnr(frameEnergies(reference, frame), (k) => {
    let error = 0;
    for (let i = k * frame; i < (k + 1) * frame; i++) error += (reference[i] - aligned[i]) ** 2;
    return error;
  });
}

/** Scale-invariant signal-to-distortion ratio. */
export function siSdr(reference: Float32Array, aligned: Float32Array): number {
  const alpha = dot(reference, aligned) / dot(reference, reference);
  let target = 0;
  let error = 0;
  for (let i = 0; i < reference.length; i++) {
    target += (alpha * reference[i]) ** 2;
    error += (aligned[i] - alpha * reference[i]) ** 2;
  }
  return 10 * Math.log10(target / error);
}

/** Segmental SI-SDR's window: long enough for speech, short enough that a leveler's slow gain is constant within it. */
const SI_SDR_WINDOW_SECONDS = 0.5;
/** Per-window SI-SDR is clamped: below -10 dB the speech is lost anyway, and an exact copy would be infinite. */
const SEG_SI_SDR_MIN_DB = -10;
const SEG_SI_SDR_MAX_DB = 60;

/**
 * The mean SI-SDR over 0.5 s windows where the reference is not silent (within 40 dB of its loudest window),
 * each clamped to -10..60 dB: each window is scaled on its own, so a slow gain change costs nothing.
 */
export function segmentalSiSdr(reference: Float32Array, aligned: Float32Array, sampleRate: number): number {
  const window = Math.round(SI_SDR_WINDOW_SECONDS * sampleRate);
  const energies = frameEnergies(reference, window);
  const loudest = Math.max(...energies);
  let sum = 0;
  let count = 0;
  for (let k = 0; k < energies.length; k++) {
    if (energies[k] < loudest * 10 ** (-SILENT_DB / 10)) continue;
    const ratio = siSdr(
      reference.subarray(k * window, (k + 1) * window),
      aligned.subarray(k * window, (k + 1) * window),
    );
    sum += Math.min(SEG_SI_SDR_MAX_DB, Math.max(SEG_SI_SDR_MIN_DB, Number.isNaN(ratio) ? SEG_SI_SDR_MIN_DB : ratio));
    count++;
  }
  return sum / count;
}

/** Level (dBFS) of `signal` in the frames where `clean` is silent: the noise left in the pauses. */
export function pauseFloorDb(clean: Float32Array, signal: Float32Array, sampleRate: number): number {
  const frame = Math.round(FRAME_SECONDS * sampleRate);
  const energies = frameEnergies(clean, frame);
  const loudest = Math.max(...energies);
  let sum = 0;
  let count = 0;
  for (let k = 0; k < energies.length; k++) {
    if (energies[k] >= loudest * 10 ** (-(SILENT_DB + 10) / 10)) continue;
    for (let i = k * frame; i < (k + 1) * frame; i++) sum += signal[i] * signal[i];
    count += frame;
  }
  return 10 * Math.log10(sum / count);
}

/** Segmental SNR of magnitude spectra (20 ms Hann frames, 10 ms hop) against the clean speech itself. */
export function magnitudeSegmentalSnr(clean: Float32Array, aligned: Float32Array, sampleRate: number): number {
  const length = Math.round(2 * FRAME_SECONDS * sampleRate);
  const hop = length / 2;
  const size = 2 ** Math.ceil(Math.log2(length));
  const window = Float64Array.from({ length }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / length));
  const spectra = (signal: Float32Array) => {
    const frames: Float64Array[] = [];
    for (let at = 0; at + length <= signal.length; at += hop)
      frames.push(magnitudes(signal.subarray(at, at + length), window, size));
    return frames;
  };
  const reference = spectra(clean);
  const enhanced = spectra(aligned);
  const energies = reference.map((m) => m.reduce((sum, v) => sum + v * v, 0));
  return meanSegmentSnr(energies, (k) => {
    let error = 0;
    for (let bin = 0; bin < reference[k].length; bin++) error += (reference[k][bin] - enhanced[k][bin]) ** 2;
    return error;
  });
}

/** The mean over the non-silent segments of their SNR (energy over `errorOf(k)`), each clamped to -10..35 dB. */
function meanSegmentSnr(energies: ArrayLike<number>, errorOf: (k: number) => number): number {
  const loudest = Math.max(...Array.from(energies));
  let sum = 0;
  let count = 0;
  for (let k = 0; k < energies.length; k++) {
    if (energies[k] < loudest * 10 ** (-SILENT_DB / 10)) continue;
    sum += Math.min(SEG_MAX_DB, Math.max(SEG_MIN_DB, 10 * Math.log10(energies[k] / Math.max(errorOf(k), 1e-30))));
    count++;
  }
  return sum / count;
}

/** |FFT| of a windowed frame, zero-padded to `size` (a power of two), bins 0..size/2. */
function magnitudes(frame: Float32Array, window: Float64Array, size: number): Float64Array {
  const re = new Float64Array(size);
  const im = new Float64Array(size);
  for (let i = 0; i < frame.length; i++) re[i] = frame[i] * window[i];
  fft(re, im);
  return Float64Array.from({ length: size / 2 + 1 }, (_, bin) => Math.hypot(re[bin], im[bin]));
}

/** In-place iterative radix-2 FFT (also the STOI measure's). */
export function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let span = 2; span <= n; span <<= 1) {
    const angle = (-2 * Math.PI) / span;
    for (let start = 0; start < n; start += span) {
      for (let k = 0; k < span / 2; k++) {
        const wr = Math.cos(angle * k);
        const wi = Math.sin(angle * k);
        const a = start + k;
        const b = a + span / 2;
        const tr = re[b] * wr - im[b] * wi;
        const ti = re[b] * wi + im[b] * wr;
        re[b] = re[a] - tr;
        im[b] = im[a] - ti;
        re[a] += tr;
        im[a] += ti;
      }
    }
  }
}
