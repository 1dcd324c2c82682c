// Weighted prediction error (WPE) de-reverberation of one frequency band (Nakatani et al. 2010; Yoshioka
// and Nakatani 2012), single channel: the late reverberation in frame t is predicted from the observed
// frames t-D-K+1 .. t-D by a filter g (K taps, fitted by least squares weighted by 1 / the power of the
// de-reverberated speech), and subtracted. The delay D leaves the direct sound and early reflections alone:
// only what is predictable from more than D frames back is removed. The weights come from the last
// estimate, so the fit is iterated: the first from the observed power.
//
// A band holds its frames contiguous (re and im apart): `history` frames before the block (observed, never
// changed: the predictors of the block's first frames), then the block's own frames.

export interface WpeParameters {
  /** Prediction filter length in frames. */
  taps: number;
  /** Frames between a frame and its nearest predictor. */
  delay: number;
  /** Fits, each weighted by the estimate of the one before (the first by the observed power). */
  iterations: number;
  /** The weights' floor, as a share of the block's loudest frame in the band: quiet frames do not dominate the fit. */
  relativeFloor: number;
}

/** Where a band's frames are and which of them the fit and the output take. */
export interface BandFrames {
  re: Float32Array;
  im: Float32Array;
  /** Index of the band's first frame (its history) in re and im. */
  offset: number;
  /** Frames before the block: taps + delay - 1 of them. */
  history: number;
  /** Frames of the block. */
  frames: number;
}

/** Reused buffers of one band's fit: the normal equations and the estimate. */
export class WpeWorkspace {
  readonly rr: Float64Array;
  readonly ri: Float64Array;
  readonly pr: Float64Array;
  readonly pi: Float64Array;
  readonly gr: Float64Array;
  readonly gi: Float64Array;
  /** The weights 1 / power per frame of the block. */
  readonly weight: Float64Array;

  constructor(
    readonly taps: number,
    maxFrames: number,
  ) {
    this.rr = new Float64Array(taps * taps);
    this.ri = new Float64Array(taps * taps);
    this.pr = new Float64Array(taps);
    this.pi = new Float64Array(taps);
    this.gr = new Float64Array(taps);
    this.gi = new Float64Array(taps);
    this.weight = new Float64Array(maxFrames);
  }
}

/**
 * Fits the band's prediction filter over the block (left in `work.gr`, `work.gi`: the predicted late
 * reverberation of frame t is the sum over i of conj(g_i) x(t - delay - i)).
 */
export function fitBand(band: BandFrames, p: WpeParameters, work: WpeWorkspace): void {
  const { re, im, frames } = band;
  const start = band.offset + band.history;
  const weight = work.weight;
  // First weights: the observed power.
  for (let t = 0; t < frames; t++) {
    const xr = re[start + t];
    const xi = im[start + t];
    weight[t] = xr * xr + xi * xi;
  }
  work.gr.fill(0);
  work.gi.fill(0);
  for (let iteration = 0; iteration < p.iterations; iteration++) {
    if (iteration > 0) {
      for (let t = 0; t < frames; t++) {
        const predicted = predictAt(band, start + t, p.delay, work);
        const dr = re[start + t] - predicted[0];
        const di = im[start + t] - predicted[1];
        weight[t] = dr * dr + di * di;
      }
    }
    if (!toWeights(weight, frames, p.relativeFloor)) return; // a silent band: nothing to predict
    accumulate(band, p, work);
    solveHermitian(work);
  }
}

/** Writes the de-reverberated block over the band's frames: x - strength * prediction. */
export function applyBand(band: BandFrames, delay: number, strength: number, work: WpeWorkspace): void {
  const { re, im, frames } = band;
  const start = band.offset + band.history;
  // From the last frame back: each frame's predictors are earlier frames, still the observed ones.
  for (let t = frames - 1; t >= 0; t--) {
    const predicted = predictAt(band, start + t, delay, work);
    re[start + t] -= strength * predicted[0];
    im[start + t] -= strength * predicted[1];
  }
}

const prediction = new Float64Array(2);

function predictAt(band: BandFrames, at: number, delay: number, work: WpeWorkspace): Float64Array {
  const { re, im } = band;
  const { gr, gi, taps } = work;
  let yr = 0;
  let yi = 0;
  for (let i = 0, x = at - delay; i < taps; i++, x--) {
    const vr = re[x];
    const vi = im[x];
    yr += gr[i] * vr + gi[i] * vi;
    yi += gr[i] * vi - gi[i] * vr;
  }
  prediction[0] = yr;
  prediction[1] = yi;
  return prediction;
}

/** Powers to weights 1 / max(power, floor); false when the band has no power at all. */
function toWeights(weight: Float64Array, frames: number, relativeFloor: number): boolean {
  let loudest = 0;
  for (let t = 0; t < frames; t++) if (weight[t] > loudest) loudest = weight[t];
  if (!(loudest > 1e-20)) return false;
  const floor = relativeFloor * loudest;
  for (let t = 0; t < frames; t++) weight[t] = 1 / Math.max(weight[t], floor);
  return true;
}

/** The weighted normal equations: R = sum w v v^H (upper triangle), p = sum w v conj(x_t). */
function accumulate(band: BandFrames, p: WpeParameters, work: WpeWorkspace): void {
  const { re, im, frames } = band;
  const { rr, ri, pr, pi, weight } = work;
  const taps = p.taps;
  const start = band.offset + band.history;
  rr.fill(0);
  ri.fill(0);
  pr.fill(0);
  pi.fill(0);
  for (let t = 0; t < frames; t++) {
    const w = weight[t];
    const base = start + t - p.delay; // v_i = x(base - i)
    const xr = re[start + t];
    const xi = im[start + t];
    for (let i = 0; i < taps; i++) {
      const ar = w * re[base - i];
      const ai = w * im[base - i];
      pr[i] += ar * xr + ai * xi;
      pi[i] += ai * xr - ar * xi;
      const row = i * taps;
      for (let j = i, v = base - i; j < taps; j++, v--) {
        const vr = re[v];
        const vi = im[v];
        rr[row + j] += ar * vr + ai * vi;
        ri[row + j] += ai * vr - ar * vi;
      }
    }
  }
}

/**
 * Solves R g = p for Hermitian positive definite R (upper triangle given) by Cholesky, R = L L^H, with a
 * light diagonal loading so a band of few independent frames still gives a bounded filter.
 */
function solveHermitian(work: WpeWorkspace): void {
  const { rr, ri, pr, pi, gr, gi, taps: n } = work;
  let trace = 0;
  for (let i = 0; i < n; i++) trace += rr[i * n + i];
  const loading = 1e-6 * (trace / n) + 1e-30;
  // L overwrites the lower triangle (row i, column j <= i); R's upper triangle is read as R_ij = conj(R_ji).
  for (let j = 0; j < n; j++) {
    let d = rr[j * n + j] + loading;
    for (let k = 0; k < j; k++) d -= rr[j * n + k] ** 2 + ri[j * n + k] ** 2;
    if (!(d > 0)) {
      gr.fill(0);
      gi.fill(0);
      return;
    }
    const ljj = Math.sqrt(d);
    rr[j * n + j] = ljj;
    ri[j * n + j] = 0;
    for (let i = j + 1; i < n; i++) {
      // R_ij for i > j is conj(R_ji), kept at [j][i].
      let sr = rr[j * n + i];
      let si = -ri[j * n + i];
      for (let k = 0; k < j; k++) {
        // L_ik conj(L_jk)
        const ar = rr[i * n + k];
        const ai = ri[i * n + k];
        const br = rr[j * n + k];
        const bi = ri[j * n + k];
        sr -= ar * br + ai * bi;
        si -= ai * br - ar * bi;
      }
      rr[i * n + j] = sr / ljj;
      ri[i * n + j] = si / ljj;
    }
  }
  // L y = p
  for (let i = 0; i < n; i++) {
    let sr = pr[i];
    let si = pi[i];
    for (let k = 0; k < i; k++) {
      const lr = rr[i * n + k];
      const li = ri[i * n + k];
      sr -= lr * gr[k] - li * gi[k];
      si -= lr * gi[k] + li * gr[k];
    }
    gr[i] = sr / rr[i * n + i];
    gi[i] = si / rr[i * n + i];
  }
  // L^H g = y
  for (let i = n - 1; i >= 0; i--) {
    let sr = gr[i];
    let si = gi[i];
    for (let k = i + 1; k < n; k++) {
      // (L^H)_ik = conj(L_ki)
      const lr = rr[k * n + i];
      const li = -ri[k * n + i];
      sr -= lr * gr[k] - li * gi[k];
      si -= lr * gi[k] + li * gr[k];
    }
    gr[i] = sr / rr[i * n + i];
    gi[i] = si / rr[i * n + i];
  }
}
