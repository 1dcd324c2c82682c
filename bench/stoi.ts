// Short-time objective intelligibility, as published: STOI (Taal, Hendriks, Heusdens, Jensen, IEEE TASLP
// 2011) and extended STOI, ESTOI (Jensen & Taal, IEEE TASLP 2016). Both compare the clean speech with the
// processed speech in 15 one-third-octave bands over 384 ms segments; 1 is the clean speech itself.
//   - both signals at 10 kHz; frames where the clean speech is more than 40 dB under its loudest frame
//     are removed from both (the rest overlap-added back into signals);
//   - 256-sample Hann frames, 50% overlap, 512-point FFT; bands from 150 Hz, energies summed per band;
//   - segments of 30 frames, one per frame position.
// STOI: per band and segment, the processed envelope scaled to the clean one's energy and clipped at
// -15 dB signal-to-distortion, then correlated with the clean envelope; the mean over bands and segments.
// ESTOI: per segment, both band-by-frame matrices normalised to zero mean and unit norm along each band
// (row) and then each frame (column); the mean over frames of the columns' inner products.
import { resamplePoly } from './resample-poly';
import { fft } from './quality-metrics';

const RATE = 10_000;
const FRAME = 256;
const HOP = FRAME / 2;
const FFT_SIZE = 512;
const BANDS = 15;
const LOWEST_CENTRE_HZ = 150;
const SEGMENT = 30;
const CLIP_SDR_DB = -15;
const DYNAMIC_RANGE_DB = 40;
const EPS = 2.220446049250313e-16;

/** MATLAB's hanning(256): the symmetric Hann window without its zero end points. */
const WINDOW = Float64Array.from(
  { length: FRAME },
  (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * (i + 1)) / (FRAME + 1)),
);

export interface Intelligibility {
  stoi: number;
  estoi: number;
}

/** STOI of `processed` against `clean` (same rate and length, aligned), about 0 (unintelligible) to 1. */
export function stoi(clean: Float32Array, processed: Float32Array, sampleRate: number): number {
  return intelligibility(clean, processed, sampleRate).stoi;
}

/** ESTOI of `processed` against `clean` (same rate and length, aligned), about 0 to 1. */
export function estoi(clean: Float32Array, processed: Float32Array, sampleRate: number): number {
  return intelligibility(clean, processed, sampleRate).estoi;
}

/** STOI and ESTOI together: both from one resampling and one set of band envelopes. */
export function intelligibility(clean: Float32Array, processed: Float32Array, sampleRate: number): Intelligibility {
  if (clean.length !== processed.length)
    throw new Error(`STOI: clean and processed must have the same length, got ${clean.length} and ${processed.length}`);
  const [x, y] = removeSilentFrames(resamplePoly(clean, sampleRate, RATE), resamplePoly(processed, sampleRate, RATE));
  const xBands = bandEnvelopes(x);
  const yBands = bandEnvelopes(y);
  const frames = xBands.length;
  if (frames < SEGMENT)
    throw new Error(`STOI: ${frames} speech frames after silence removal; at least ${SEGMENT} (384 ms) are needed`);
  let stoiSum = 0;
  let estoiSum = 0;
  for (let start = 0; start + SEGMENT <= frames; start++) {
    estoiSum += segmentEstoi(xBands, yBands, start);
    for (let band = 0; band < BANDS; band++) stoiSum += segmentStoi(xBands, yBands, start, band);
  }
  const segments = frames - SEGMENT + 1;
  return { stoi: stoiSum / (segments * BANDS), estoi: estoiSum / segments };
}

/** Both signals without the frames where `x` is silent, each overlap-added back from its windowed frames. */
function removeSilentFrames(x: Float32Array, y: Float32Array): [Float64Array, Float64Array] {
  const starts: number[] = [];
  for (let at = 0; at < x.length - FRAME; at += HOP) starts.push(at);
  const energyDb = starts.map((at) => {
    let sum = 0;
    for (let i = 0; i < FRAME; i++) sum += (WINDOW[i] * x[at + i]) ** 2;
    return 20 * Math.log10(Math.sqrt(sum) + EPS);
  });
  const loudest = Math.max(...energyDb);
  const kept = starts.filter((_, k) => energyDb[k] > loudest - DYNAMIC_RANGE_DB);
  const overlapAdd = (signal: Float32Array) => {
    const out = new Float64Array(kept.length === 0 ? 0 : (kept.length - 1) * HOP + FRAME);
    kept.forEach((at, k) => {
      for (let i = 0; i < FRAME; i++) out[k * HOP + i] += WINDOW[i] * signal[at + i];
    });
    return out;
  };
  return [overlapAdd(x), overlapAdd(y)];
}

/** Per frame, the 15 one-third-octave band magnitudes (square root of the summed bin energies). */
function bandEnvelopes(signal: Float64Array): Float64Array[] {
  const re = new Float64Array(FFT_SIZE);
  const im = new Float64Array(FFT_SIZE);
  const frames: Float64Array[] = [];
  for (let at = 0; at < signal.length - FRAME; at += HOP) {
    re.fill(0);
    im.fill(0);
    for (let i = 0; i < FRAME; i++) re[i] = WINDOW[i] * signal[at + i];
    fft(re, im);
    frames.push(
      Float64Array.from(BAND_BINS, ([first, end]) => {
        let energy = 0;
        for (let bin = first; bin < end; bin++) energy += re[bin] * re[bin] + im[bin] * im[bin];
        return Math.sqrt(energy);
      }),
    );
  }
  return frames;
}

/** Each band's FFT bins [first, end): its edges (centre * 2^(∓1/6)) rounded to the nearest bin. */
const BAND_BINS: Array<[number, number]> = Array.from({ length: BANDS }, (_, k) => {
  const nearestBin = (hz: number) => Math.round((hz * FFT_SIZE) / RATE);
  return [nearestBin(LOWEST_CENTRE_HZ * 2 ** ((2 * k - 1) / 6)), nearestBin(LOWEST_CENTRE_HZ * 2 ** ((2 * k + 1) / 6))];
});

/** STOI's intermediate measure d_j,m: one band, one segment. */
function segmentStoi(xBands: Float64Array[], yBands: Float64Array[], start: number, band: number): number {
  const x = new Float64Array(SEGMENT);
  const y = new Float64Array(SEGMENT);
  for (let n = 0; n < SEGMENT; n++) {
    x[n] = xBands[start + n][band];
    y[n] = yBands[start + n][band];
  }
  const scale = norm(x) / (norm(y) + EPS);
  const ceiling = 1 + 10 ** (-CLIP_SDR_DB / 20);
  for (let n = 0; n < SEGMENT; n++) y[n] = Math.min(y[n] * scale, x[n] * ceiling);
  return correlation(x, y);
}

/** ESTOI's intermediate measure: one segment, rows then columns normalised, the mean column inner product. */
function segmentEstoi(xBands: Float64Array[], yBands: Float64Array[], start: number): number {
  const x = normalisedSegment(xBands, start);
  const y = normalisedSegment(yBands, start);
  let sum = 0;
  for (let n = 0; n < SEGMENT; n++) for (let band = 0; band < BANDS; band++) sum += x[n][band] * y[n][band];
  return sum / SEGMENT;
}

/** A segment as 30 frame columns of 15 bands: each band's row to zero mean and unit norm, then each column. */
function normalisedSegment(bands: Float64Array[], start: number): Float64Array[] {
  const columns = Array.from({ length: SEGMENT }, (_, n) => Float64Array.from(bands[start + n]));
  for (let band = 0; band < BANDS; band++) {
    const row = Float64Array.from(columns, (column) => column[band]);
    centreAndScale(row);
    columns.forEach((column, n) => (column[band] = row[n]));
  }
  columns.forEach(centreAndScale);
  return columns;
}

/** Pearson correlation of two vectors (0 when either is constant). */
function correlation(a: Float64Array, b: Float64Array): number {
  const x = Float64Array.from(a);
  const y = Float64Array.from(b);
  centreAndScale(x);
  centreAndScale(y);
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i] * y[i];
  return sum;
}

/** In place: minus its mean, over its norm (a constant vector becomes zeros). */
function centreAndScale(v: Float64Array): void {
  const mean = v.reduce((sum, value) => sum + value, 0) / v.length;
  for (let i = 0; i < v.length; i++) v[i] -= mean;
  const length = norm(v) + EPS;
  for (let i = 0; i < v.length; i++) v[i] /= length;
}

function norm(v: Float64Array): number {
  let sum = 0;
  for (const value of v) sum += value * value;
  return Math.sqrt(sum);
}
