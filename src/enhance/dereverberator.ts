// De-reverberation of one channel, streamed: a short-time Fourier transform (square-root Hann windows,
// three quarters overlapping), WPE (wpe.ts) in each band up to 12 kHz over blocks of about 30 s, and the
// overlap-add back. A block's filter is fitted on the block itself, so memory is one block's spectrum
// whatever the file's length, and a speaker who moves in the room is followed from block to block.
// The output is sample-aligned with the input and exactly as long: it trails by up to one block.
//
// The parameters start from a public single-channel measurement (an 85 ms window, a weight floor of 1e-2
// of the loudest frame per band, fitted up to 12 kHz) and were chosen on the de-reverberation bench
// (docs/benchmarks.md, "De-reverberation"): 15 taps of 21 ms (320 ms of prediction) gave 0.1 dB less
// SI-SDR than 30 in a third of the time; a delay of 3 frames (64 ms: the early reflections stay); two
// fits (one gave 0.4 dB less, a third 0.1 dB more for half as much time again); half-overlapping
// windows lost 1.5 dB.
import { RealFft } from './real-fft';
import { concat } from './same-length';
import { applyBand, fitBand, WpeWorkspace, type BandFrames, type WpeParameters } from './wpe';

const WINDOW_SECONDS = 0.085;
const PREDICTION_SECONDS = 0.32;
const DELAY_SECONDS = 0.064;
const BLOCK_SECONDS = 30;
/** Bands above are passed through: speech's reverberation there is weak, and the fit's cost halves at 48 kHz. */
const FIT_UP_TO_HZ = 12_000;
const ITERATIONS = 2;
const RELATIVE_FLOOR = 1e-2;
/** A last block shorter than this share of a block takes the block before's filters: too few frames for a fit of its own. */
const SHORT_BLOCK_SHARE = 0.25;

export interface DereverbPlan {
  window: number;
  hop: number;
  /** Frames in a block. */
  blockFrames: number;
  /** Bands fitted: 0 .. fittedBands - 1. */
  fittedBands: number;
  wpe: WpeParameters;
}

/** The STFT and WPE sizes at a sample rate: the same durations at any rate (a power-of-two window). */
export function dereverbPlan(sampleRate: number, blockSeconds = BLOCK_SECONDS): DereverbPlan {
  const window = 2 ** Math.round(Math.log2(sampleRate * WINDOW_SECONDS));
  const hop = window / 4;
  const hopSeconds = hop / sampleRate;
  const bands = window / 2 + 1;
  return {
    window,
    hop,
    blockFrames: Math.round(blockSeconds / hopSeconds),
    fittedBands: Math.min(bands, Math.floor((FIT_UP_TO_HZ / sampleRate) * window) + 1),
    wpe: {
      taps: Math.max(1, Math.round(PREDICTION_SECONDS / hopSeconds)),
      delay: Math.max(1, Math.round(DELAY_SECONDS / hopSeconds)),
      iterations: ITERATIONS,
      relativeFloor: RELATIVE_FLOOR,
    },
  };
}

export class Dereverberator {
  private readonly bands: number;
  private readonly history: number;
  /** Frames per band in the spectrum buffer: history then a block. */
  private readonly stride: number;
  private readonly re: Float32Array;
  private readonly im: Float32Array;
  private readonly work: WpeWorkspace;
  /** Each fitted band's last filter (re, im per tap), for a short last block. */
  private readonly filtersRe: Float64Array;
  private readonly filtersIm: Float64Array;
  private haveFilters = false;
  private readonly sqrtHann: Float32Array;
  private readonly input: Float32Array;
  private inputFill: number;
  private readonly frameTime: Float32Array;
  private readonly spectrum: Float32Array;
  private readonly overlap: Float32Array;
  /** Frames of the block so far. */
  private blockFill = 0;
  private taken = 0;
  private given = 0;
  /** Frames analysed since the start. */
  private analysed = 0;
  /** Output samples still to drop: the STFT's own delay. */
  private leadIn: number;
  private destroyed = false;
  /** One band's last observed frames (re then im), kept while the band is de-reverberated. */
  private readonly tail: Float32Array;

  private constructor(
    private readonly fft: RealFft,
    readonly plan: DereverbPlan,
    /** 0..1: the share of the predicted reverberation taken away. */
    private readonly strength: number,
  ) {
    const { window, hop, blockFrames, wpe } = plan;
    this.bands = window / 2 + 1;
    this.history = wpe.taps + wpe.delay - 1;
    this.stride = this.history + blockFrames;
    this.re = new Float32Array(this.bands * this.stride);
    this.im = new Float32Array(this.bands * this.stride);
    this.work = new WpeWorkspace(wpe.taps, blockFrames);
    this.filtersRe = new Float64Array(plan.fittedBands * wpe.taps);
    this.filtersIm = new Float64Array(plan.fittedBands * wpe.taps);
    // Analysis and synthesis windows alike; at a quarter-window hop their product sums to 2.
    this.sqrtHann = Float32Array.from({ length: window }, (_, n) =>
      Math.sqrt(0.5 - 0.5 * Math.cos((2 * Math.PI * n) / window)),
    );
    this.input = new Float32Array(window);
    this.inputFill = window - hop;
    this.frameTime = new Float32Array(window);
    this.spectrum = new Float32Array(window + 2);
    this.overlap = new Float32Array(window);
    this.leadIn = window - hop;
    this.tail = new Float32Array(2 * this.history);
  }

  /** `blockSeconds`: the blocks' length (tests take shorter ones, to cross a block's end in a short signal). */
  static async create(sampleRate: number, strength: number, blockSeconds?: number): Promise<Dereverberator> {
    if (!(strength >= 0 && strength <= 1))
      throw new RangeError(`de-reverberation strength must be 0..1, not ${strength}`);
    const plan = dereverbPlan(sampleRate, blockSeconds);
    return new Dereverberator(await RealFft.create(plan.window), plan, strength);
  }

  /** Bytes the de-reverberator holds, whatever the file's length. */
  get memoryBytes(): number {
    return this.re.byteLength * 2 + this.work.weight.byteLength;
  }

  /** Takes `frames` samples; gives what is ready (often nothing: a block is given whole). */
  push(samples: Float32Array, frames: number): Float32Array {
    this.taken += frames;
    const out: Float32Array[] = [];
    const { window, hop } = this.plan;
    for (let at = 0; at < frames;) {
      const n = Math.min(window - this.inputFill, frames - at);
      this.input.set(samples.subarray(at, at + n), this.inputFill);
      this.inputFill += n;
      at += n;
      if (this.inputFill === window) {
        this.analyse();
        this.input.copyWithin(0, hop);
        this.inputFill = window - hop;
        if (this.blockFill === this.plan.blockFrames) out.push(this.endBlock(false));
      }
    }
    return this.give(out);
  }

  /** The rest: the last block, and the tail the windows still hold. */
  flush(): Float32Array {
    const out: Float32Array[] = [];
    const { window, hop } = this.plan;
    // Silence through the windows until the last input sample has been overlap-added whole: the frames
    // must reach its place in the padded stream (the input runs window - hop samples late there).
    while (this.analysed * hop < this.taken + window - hop) {
      this.input.fill(0, this.inputFill);
      this.inputFill = window;
      this.analyse();
      this.input.copyWithin(0, hop);
      this.inputFill = window - hop;
      if (this.blockFill === this.plan.blockFrames) out.push(this.endBlock(false));
    }
    if (this.blockFill > 0) out.push(this.endBlock(true));
    const all = this.give(out);
    this.destroy();
    return all;
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.fft.destroy();
  }

  private analyse(): void {
    const { window } = this.plan;
    for (let n = 0; n < window; n++) this.frameTime[n] = this.input[n] * this.sqrtHann[n];
    this.fft.forward(this.frameTime, this.spectrum);
    const t = this.history + this.blockFill;
    for (let k = 0; k < this.bands; k++) {
      this.re[k * this.stride + t] = this.spectrum[2 * k];
      this.im[k * this.stride + t] = this.spectrum[2 * k + 1];
    }
    this.blockFill++;
    this.analysed++;
  }

  /** De-reverberates the block's frames and turns them back to samples; keeps its end as the next history. */
  private endBlock(last: boolean): Float32Array {
    const { wpe, fittedBands, blockFrames, window, hop } = this.plan;
    const frames = this.blockFill;
    const reuse = last && this.haveFilters && frames < SHORT_BLOCK_SHARE * blockFrames;
    if (this.strength > 0) {
      for (let k = 0; k < fittedBands; k++) {
        const band: BandFrames = { re: this.re, im: this.im, offset: k * this.stride, history: this.history, frames };
        const filter = k * wpe.taps;
        if (reuse) {
          this.work.gr.set(this.filtersRe.subarray(filter, filter + wpe.taps));
          this.work.gi.set(this.filtersIm.subarray(filter, filter + wpe.taps));
        } else {
          // The band's observed frames are kept for the next block's history before they change.
          fitBand(band, wpe, this.work);
          this.filtersRe.set(this.work.gr, filter);
          this.filtersIm.set(this.work.gi, filter);
        }
        this.keepTail(k, frames);
        applyBand(band, wpe.delay, this.strength, this.work);
        this.placeTail(k);
      }
      this.haveFilters = true;
    }
    const out = new Float32Array(frames * hop);
    const scale = (2 * hop) / (window * window); // the inverse FFT's size, and the windows' sum (window / 2 hop)
    for (let t = 0; t < frames; t++) {
      const at = this.history + t;
      for (let k = 0; k < this.bands; k++) {
        this.spectrum[2 * k] = this.re[k * this.stride + at];
        this.spectrum[2 * k + 1] = this.im[k * this.stride + at];
      }
      this.fft.inverse(this.spectrum, this.frameTime);
      for (let n = 0; n < window; n++) this.overlap[n] += this.frameTime[n] * this.sqrtHann[n] * scale;
      out.set(this.overlap.subarray(0, hop), t * hop);
      this.overlap.copyWithin(0, hop);
      this.overlap.fill(0, window - hop);
    }
    this.blockFill = 0;
    return out;
  }

  /** Keeps band k's last `history` observed frames: the next block's predictors. */
  private keepTail(k: number, frames: number): void {
    // The `history` frames ending at the block's last frame (in a block shorter than that, some are the
    // old history's).
    const from = k * this.stride + frames;
    this.tail.set(this.re.subarray(from, from + this.history), 0);
    this.tail.set(this.im.subarray(from, from + this.history), this.history);
  }

  /** Puts the kept frames at the front of band k: read by the next block's fit, never by this synthesis. */
  private placeTail(k: number): void {
    const h = this.history;
    this.re.set(this.tail.subarray(0, h), k * this.stride);
    this.im.set(this.tail.subarray(h), k * this.stride);
  }

  private give(blocks: Float32Array[]): Float32Array {
    let samples =
      blocks.length === 1 ? blocks[0] : blocks.reduce((all, block) => concat(all, block), new Float32Array(0));
    if (this.leadIn > 0) {
      const drop = Math.min(this.leadIn, samples.length);
      samples = samples.subarray(drop);
      this.leadIn -= drop;
    }
    const n = Math.min(samples.length, this.taken - this.given);
    this.given += n;
    return samples.subarray(0, n);
  }
}
