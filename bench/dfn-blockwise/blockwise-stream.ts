// How the engine ran DeepFilterNet3 before its stateful graphs, kept for the benchmarks' side by side:
// one 48 kHz signal, streamed in blocks with flat memory. The network keeps no state
// between calls, so each block is run with WARMUP frames of the features before it, for its recurrent
// layers to settle as they would have in one run over the whole file; only the block's own frames are
// used. The features' running normalisations are carried across blocks exactly (they are computed
// here, frame by frame), after settling on the file's first seconds (PRIME_FRAMES). Output sample n is
// input sample n (the STFT's delay is taken off).
import { Analysis, BINS, HOP, STFT_DELAY, Synthesis } from '../../src/enhance/dfn-frames';
import { DF_BINS, ERB_BANDS, FeatureExtractor } from '../../src/enhance/dfn-features';
import { applyDfnOutputs, DF_LOOKAHEAD, keptShare } from '../../src/enhance/dfn-filter';
import { CONV_LOOKAHEAD, DF_ORDER, type DfnOutputs } from '../../src/enhance/dfn-model';
import { PRIME_FRAMES } from '../../src/enhance/dfn-stream';
import { RealFft } from '../../src/enhance/real-fft';
import { runWholeGraphs } from './whole-graphs';

export interface DfnBlocking {
  /** Frames (10 ms) enhanced per run of the network. */
  block: number;
  /** Frames run before a block's own for the network's state to settle. */
  warmup: number;
}

/**
 * Chosen by measurement on 63 s of speech in white noise (5 dB SNR), block-wise against one run over the
 * whole file: the recurrent layers forget slowly, so 2 s of warm-up gave -33.9 dB, 4 s -34.9 dB, 6 s
 * -37.3 dB, 10 s -39.4 dB and 15 s -41.2 dB (30 s blocks). 30 s blocks keep the 15 s warm-up to half
 * again the network's time.
 */
export const DEFAULT_BLOCKING: DfnBlocking = { block: 3000, warmup: 1500 };

/** Frames the network must have seen past a frame before that frame can be enhanced. */
const LOOKAHEAD = Math.max(CONV_LOOKAHEAD, DF_LOOKAHEAD);
const ZERO_SPECTRUM = new Float32Array(2 * BINS);

export class BlockwiseDfnStream {
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
  /** What a run is given: features laid out as the network's tensors. */
  private readonly erbInput: Float32Array;
  private readonly specInput: Float32Array;
  private readonly chunk = new Float32Array(HOP);
  private filled = 0;
  /** Spectra analysed so far. */
  private analysed = 0;
  /** Whether the running normalisations have settled (features are made from then on). */
  private primed = false;
  /** Spectra enhanced and synthesized so far. */
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
    private readonly blocking: DfnBlocking,
    capDb: number,
  ) {
    this.analysis = new Analysis(fft);
    this.synthesis = new Synthesis(fft);
    this.kept = keptShare(capDb);
    this.capacity = Math.max(blocking.warmup + blocking.block, PRIME_FRAMES) + LOOKAHEAD + 1;
    this.erb = new Float32Array(this.capacity * ERB_BANDS);
    this.re = new Float32Array(this.capacity * DF_BINS);
    this.im = new Float32Array(this.capacity * DF_BINS);
    this.spectra = new Float32Array(this.capacity * 2 * BINS);
    this.erbInput = new Float32Array(this.capacity * ERB_BANDS);
    this.specInput = new Float32Array(this.capacity * 2 * DF_BINS);
  }

  /** `capDb`: the most noise is pulled down (Infinity: no cap). */
  static async create(capDb = Infinity, blocking = DEFAULT_BLOCKING): Promise<BlockwiseDfnStream> {
    return new BlockwiseDfnStream(await RealFft.create(2 * (BINS - 1)), blocking, capDb);
  }

  /** Takes `frames` samples; returns the enhanced output ready so far (a view, valid until the next call). */
  async push(samples: Float32Array, frames: number): Promise<Float32Array> {
    this.inputSamples += frames;
    this.outputLength = 0;
    await this.feed(samples.subarray(0, frames));
    return this.emit();
  }

  /** The rest of the output, up to the input's length. */
  async flush(): Promise<Float32Array> {
    this.outputLength = 0;
    // Zeros after the end: the last partial hop, one hop for the STFT's delay, and the lookahead.
    const wanted = Math.ceil((this.inputSamples + STFT_DELAY) / HOP) + LOOKAHEAD;
    while (this.analysed < wanted) await this.feed(new Float32Array(HOP - this.filled));
    this.prime();
    await this.enhanceUpTo(this.analysed - LOOKAHEAD);
    return this.emit();
  }

  destroy(): void {
    this.fft.destroy();
  }

  private async feed(samples: Float32Array): Promise<void> {
    for (let offset = 0; offset < samples.length;) {
      const n = Math.min(HOP - this.filled, samples.length - offset);
      this.chunk.set(samples.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      if (this.filled < HOP) continue;
      this.filled = 0;
      this.analyse();
      if (this.analysed === PRIME_FRAMES) this.prime();
      if (this.primed && this.analysed - LOOKAHEAD - this.enhanced >= this.blocking.block)
        await this.enhanceUpTo(this.analysed - LOOKAHEAD);
    }
  }

  private analyse(): void {
    const slot = this.analysed % this.capacity;
    this.analysis.push(this.chunk, this.spectrum(slot));
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
    return this.spectra.subarray(slot * 2 * BINS, (slot + 1) * 2 * BINS);
  }

  private makeFeatures(slot: number): void {
    this.features.push(
      this.spectrum(slot),
      this.erb.subarray(slot * ERB_BANDS, (slot + 1) * ERB_BANDS),
      this.re.subarray(slot * DF_BINS, (slot + 1) * DF_BINS),
      this.im.subarray(slot * DF_BINS, (slot + 1) * DF_BINS),
    );
  }

  /** Runs the network over the frames from WARMUP before the first not enhanced yet, and enhances up to `end`. */
  private async enhanceUpTo(end: number): Promise<void> {
    if (end <= this.enhanced) return;
    const first = Math.max(0, this.enhanced - this.blocking.warmup);
    const count = end + CONV_LOOKAHEAD - first;
    for (let i = 0; i < count; i++) {
      const slot = (first + i) % this.capacity;
      this.erbInput.set(this.erb.subarray(slot * ERB_BANDS, (slot + 1) * ERB_BANDS), i * ERB_BANDS);
      this.specInput.set(this.re.subarray(slot * DF_BINS, (slot + 1) * DF_BINS), i * DF_BINS);
      this.specInput.set(this.im.subarray(slot * DF_BINS, (slot + 1) * DF_BINS), (count + i) * DF_BINS);
    }
    const outputs = await runWholeGraphs(this.erbInput, this.specInput, count);
    for (let t = this.enhanced; t < end; t++) this.enhance(t, outputs, t + CONV_LOOKAHEAD - first);
  }

  private enhance(t: number, outputs: DfnOutputs, row: number): void {
    const noisy = Array.from({ length: DF_ORDER }, (_, tap) => {
      const frame = t - DF_LOOKAHEAD + tap;
      return frame < 0 ? ZERO_SPECTRUM : this.spectrum(frame % this.capacity);
    });
    applyDfnOutputs(
      noisy,
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
