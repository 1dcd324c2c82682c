// DeepFilterNet3 on one 48 kHz signal, streamed with flat memory: the network (dfn-model, stateful) runs
// on each chunk of frames as it is analysed, carrying its state from chunk to chunk, so the output is
// that of one run over the whole file whatever the chunk. The features' running normalisations are
// computed here, frame by frame, after settling on the file's first seconds (PRIME_FRAMES). Output
// sample n is input sample n (the STFT's delay is taken off).
import { Analysis, BINS, HOP, STFT_DELAY, Synthesis } from './dfn-frames';
import { DF_BINS, ERB_BANDS, FeatureExtractor } from './dfn-features';
import { applyDfnOutputs, DF_LOOKAHEAD, keptShare } from './dfn-filter';
import { CONV_LOOKAHEAD, DF_ORDER, DfnNetwork, type DfnOutputs } from './dfn-model';
import type { OnnxRuntimeKind } from './onnx-runtimes';
import { RealFft } from './real-fft';

/**
 * Frames (10 ms) per run of the network. Chosen by measurement (CPU time per 1,000 frames, one thread, at
 * 1 / 10 / 50 / 100 / 400 frames a run: WebAssembly 6835 / 1096 / 624 / 603 / 605 ms, native 3357 / 692 /
 * 406 / 376 / 372 ms): a run's fixed cost is gone by 100 frames, and 100 frames' activations are small.
 */
export const DEFAULT_CHUNK = 100;

export interface DfnStreamOptions {
  /** Frames per run of the network (any size gives the same output). */
  chunk?: number;
  /** The ONNX runtime: 'auto' takes the native one where it is installed. */
  runtime?: OnnxRuntimeKind | 'auto';
  /**
   * Frames whose spectra settle the running normalisations first (PRIME_FRAMES). A live stream cannot
   * wait 2 s for its first output: 0 starts from the model's own start values, as DeepFilterNet3 does.
   */
  primeFrames?: number;
  /**
   * Runs the network at the end of every push on all the frames it completed (up to `chunk` a run), not
   * only once `chunk` frames wait: a live stream's 20 ms chunk is 2 frames, and one run over both costs
   * little more than a run over one (a run's fixed cost), with no frame waiting longer than one hop.
   */
  runEachPush?: boolean;
}

/**
 * Frames (2 s) whose spectra settle the running normalisations before the first features are made. From
 * the fixed start values (-60..-90 dB), the first seconds of a loud file look far louder than their mean,
 * and the network's state went on acting on it for seconds. Measured on the quality bench's real clips:
 * clean clips came back at 25-38 dB segmental SI-SDR against themselves (5.7 dB for the 8 kHz one), and at
 * 35-39 dB (15.8) once settled; the 108 noisy cases lost 0.2 dB of it on average and 0.009 STOI.
 */
export const PRIME_FRAMES = 200;

/** Frames the network must have seen past a frame before that frame can be enhanced. */
const LOOKAHEAD = CONV_LOOKAHEAD;
// The deep filter's taps past spectrum t are analysed by the time the network's row for t is.
if (DF_LOOKAHEAD > CONV_LOOKAHEAD) throw new Error('the deep filter looks further ahead than the network');
const ZERO_SPECTRUM = new Float32Array(2 * BINS);

export class DfnStream {
  private readonly analysis: Analysis;
  private readonly synthesis: Synthesis;
  private readonly features = new FeatureExtractor();
  private readonly kept: number;
  private readonly capacity: number;
  /** Per frame, in rings of `capacity` frames: features and noisy spectra. */
  private readonly erb: Float32Array;
  private readonly re: Float32Array;
  private readonly im: Float32Array;
  private readonly spectra: Float32Array;
  /** Views of each ring slot, made once (a view made per use would be garbage for every frame). */
  private readonly spectrumViews: Float32Array[];
  private readonly erbViews: Float32Array[];
  private readonly reViews: Float32Array[];
  private readonly imViews: Float32Array[];
  /** The noisy spectra under the deep filter's taps, for the frame being enhanced. */
  private readonly taps: Float32Array[] = [];
  /** What a run is given: features laid out as the network's tensors. */
  private readonly erbInput: Float32Array;
  private readonly specInput: Float32Array;
  private readonly hop = new Float32Array(HOP);
  private filled = 0;
  /** Spectra analysed so far. */
  private analysed = 0;
  /** Whether the running normalisations have settled (features are made from then on). */
  private primed = false;
  /** Frames the network has run over so far. */
  private ran = 0;
  /** Spectra enhanced and synthesized so far (the network's row t + CONV_LOOKAHEAD enhances spectrum t). */
  private enhanced = 0;
  private readonly enhancedSpectrum = new Float32Array(2 * BINS);
  private readonly synthesized = new Float32Array(HOP);
  private output = new Float32Array(HOP * 64);
  private outputLength = 0;
  /** Input samples taken (without the flush's padding) and output samples given. */
  private inputSamples = 0;
  private outputSamples = 0;
  /** Synthesized samples still to skip (the STFT's delay). */
  private skip = STFT_DELAY;

  private constructor(
    private readonly fft: RealFft,
    private readonly network: DfnNetwork,
    private readonly chunk: number,
    capDb: number,
    private readonly primeFrames = PRIME_FRAMES,
    private readonly runEachPush = false,
  ) {
    this.primed = primeFrames === 0;
    this.analysis = new Analysis(fft);
    this.synthesis = new Synthesis(fft);
    this.kept = keptShare(capDb);
    // The frames not run yet (up to a chunk, or all of them until priming) and the taps before them.
    this.capacity = Math.max(chunk, PRIME_FRAMES) + 2 * LOOKAHEAD + 1;
    this.erb = new Float32Array(this.capacity * ERB_BANDS);
    this.re = new Float32Array(this.capacity * DF_BINS);
    this.im = new Float32Array(this.capacity * DF_BINS);
    this.spectra = new Float32Array(this.capacity * 2 * BINS);
    const views = (ring: Float32Array, width: number) =>
      Array.from({ length: this.capacity }, (_, slot) => ring.subarray(slot * width, (slot + 1) * width));
    this.spectrumViews = views(this.spectra, 2 * BINS);
    this.erbViews = views(this.erb, ERB_BANDS);
    this.reViews = views(this.re, DF_BINS);
    this.imViews = views(this.im, DF_BINS);
    this.erbInput = new Float32Array(chunk * ERB_BANDS);
    this.specInput = new Float32Array(chunk * 2 * DF_BINS);
  }

  /** `capDb`: the most noise is pulled down (Infinity: no cap). */
  static async create(capDb = Infinity, options: DfnStreamOptions = {}): Promise<DfnStream> {
    const chunk = options.chunk ?? DEFAULT_CHUNK;
    if (!Number.isInteger(chunk) || chunk < 1)
      throw new RangeError(`chunk: ${chunk} is not a whole number of frames >= 1`);
    const network = await DfnNetwork.create(options.runtime ?? 'auto');
    const prime = options.primeFrames ?? PRIME_FRAMES;
    if (!Number.isInteger(prime) || prime < 0 || prime > PRIME_FRAMES)
      throw new RangeError(`primeFrames: ${prime} is not a whole number of frames from 0 to ${PRIME_FRAMES}`);
    return new DfnStream(await RealFft.create(2 * (BINS - 1)), network, chunk, capDb, prime, options.runEachPush);
  }

  /** The ONNX runtime the network runs on. */
  get runtime(): OnnxRuntimeKind {
    return this.network.runtime;
  }

  /** Runs `warmUp` once for this thread's session of the network (DfnNetwork.warmSessionOnce). */
  warmSessionOnce(warmUp: () => Promise<void>): Promise<void> {
    return this.network.warmSessionOnce(warmUp);
  }

  /** Takes `frames` samples; returns the enhanced output ready so far (a view, valid until the next call). */
  async push(samples: Float32Array, frames: number): Promise<Float32Array> {
    this.inputSamples += frames;
    this.outputLength = 0;
    await this.feed(samples.subarray(0, frames));
    if (this.runEachPush && this.primed) await this.runNetwork(this.analysed);
    return this.emit();
  }

  /** The rest of the output, up to the input's length. */
  async flush(): Promise<Float32Array> {
    this.outputLength = 0;
    // Zeros after the end: the last partial hop, one hop for the STFT's delay, and the lookahead.
    const wanted = Math.ceil((this.inputSamples + STFT_DELAY) / HOP) + LOOKAHEAD;
    while (this.analysed < wanted) await this.feed(new Float32Array(HOP - this.filled));
    this.prime();
    await this.runNetwork(this.analysed);
    return this.emit();
  }

  /** Bytes of its frame rings and buffers and of the network's state for this signal. */
  memoryBytes(): number {
    const arrays = [this.erb, this.re, this.im, this.spectra, this.erbInput, this.specInput, this.output];
    return arrays.reduce((sum, array) => sum + array.byteLength, 0) + this.network.stateBytes();
  }

  destroy(): void {
    this.fft.destroy();
  }

  private async feed(samples: Float32Array): Promise<void> {
    for (let offset = 0; offset < samples.length;) {
      const n = Math.min(HOP - this.filled, samples.length - offset);
      this.hop.set(samples.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      if (this.filled < HOP) continue;
      this.filled = 0;
      this.analyse();
      if (this.analysed === this.primeFrames) this.prime();
      if (this.primed && this.analysed - this.ran >= this.chunk) await this.runNetwork(this.analysed);
    }
  }

  private analyse(): void {
    const slot = this.analysed % this.capacity;
    this.analysis.push(this.hop, this.spectrum(slot));
    if (this.primed) this.makeFeatures(slot);
    this.analysed++;
  }

  /** Settles the running normalisations on the spectra so far, then makes their features. Once. */
  private prime(): void {
    if (this.primed) return;
    this.primed = true;
    const frames = Array.from({ length: this.analysed }, (_, frame) => frame);
    this.features.settle(frames.map((frame) => this.spectrum(frame)));
    for (const frame of frames) this.makeFeatures(frame);
  }

  /** A frame's spectrum in the ring (the ring holds every frame until priming: capacity >= PRIME_FRAMES). */
  private spectrum(slot: number): Float32Array {
    return this.spectrumViews[slot];
  }

  private makeFeatures(slot: number): void {
    this.features.push(this.spectrumViews[slot], this.erbViews[slot], this.reViews[slot], this.imViews[slot]);
  }

  /** Runs the network on the frames up to `end`, a chunk at a time, and enhances the spectra each run completes. */
  private async runNetwork(end: number): Promise<void> {
    while (this.ran < end) {
      const first = this.ran;
      const count = Math.min(this.chunk, end - first);
      for (let i = 0; i < count; i++) {
        const slot = (first + i) % this.capacity;
        this.erbInput.set(this.erbViews[slot], i * ERB_BANDS);
        this.specInput.set(this.reViews[slot], i * DF_BINS);
        this.specInput.set(this.imViews[slot], (count + i) * DF_BINS);
      }
      const outputs = await this.network.run(this.erbInput, this.specInput, count);
      this.ran += count;
      for (let row = 0; row < count; row++) {
        const t = first + row - CONV_LOOKAHEAD;
        if (t >= 0) this.enhance(t, outputs, row);
      }
    }
  }

  private enhance(t: number, outputs: DfnOutputs, row: number): void {
    for (let tap = 0; tap < DF_ORDER; tap++) {
      const frame = t - DF_LOOKAHEAD + tap;
      this.taps[tap] = frame < 0 ? ZERO_SPECTRUM : this.spectrumViews[frame % this.capacity];
    }
    applyDfnOutputs(
      this.taps,
      outputs.mask.subarray(row * ERB_BANDS, (row + 1) * ERB_BANDS),
      outputs.coefs.subarray(row * DF_BINS * DF_ORDER * 2, (row + 1) * DF_BINS * DF_ORDER * 2),
      this.kept,
      this.enhancedSpectrum,
    );
    this.synthesis.push(this.enhancedSpectrum, this.synthesized);
    this.enhanced++;
    const skipped = Math.min(this.skip, HOP);
    this.skip -= skipped;
    this.append(this.synthesized.subarray(skipped));
  }

  private append(samples: Float32Array): void {
    if (this.outputLength + samples.length > this.output.length) {
      const bigger = new Float32Array(Math.max(this.outputLength + samples.length, this.output.length * 2));
      bigger.set(this.output.subarray(0, this.outputLength));
      this.output = bigger;
    }
    this.output.set(samples, this.outputLength);
    this.outputLength += samples.length;
  }

  /** Output up to the input's length, never past it. */
  private emit(): Float32Array {
    const n = Math.min(this.outputLength, this.inputSamples - this.outputSamples);
    this.outputSamples += n;
    return this.output.subarray(0, n);
  }
}
