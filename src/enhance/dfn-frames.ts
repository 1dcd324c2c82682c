// DeepFilterNet3's short-time Fourier transform (its config.ini: 48 kHz, FFT 960, hop 480): analysis of
// hop-sized chunks into spectra with the Vorbis window, and synthesis back by overlap-add. The Vorbis
// window meets the Princen-Bradley condition (w[n]^2 + w[n + hop]^2 = 1), so analysis then synthesis
// reconstructs the input exactly, FFT_SIZE - HOP samples late.
import { RealFft } from './real-fft';

export const DFN_RATE = 48_000;
export const FFT_SIZE = 960;
export const HOP = 480;
/** Frequency bins of a spectrum: 0 Hz to Nyquist in steps of 50 Hz. */
export const BINS = FFT_SIZE / 2 + 1;
/** Synthesis gives analysis' input back this many samples late. */
export const STFT_DELAY = FFT_SIZE - HOP;
/**
 * The spectra are scaled by 1 / (FFT_SIZE^2 / (2 * HOP)) = 1 / 960 (the model was trained on spectra so
 * scaled); the unnormalized inverse transform makes up for it.
 */
const ANALYSIS_SCALE = 1 / ((FFT_SIZE * FFT_SIZE) / (2 * HOP));

/** w[n] = sin(pi/2 * sin^2(pi * (n + 0.5) / N)). */
export function vorbisWindow(size = FFT_SIZE): Float32Array {
  const window = new Float32Array(size);
  for (let n = 0; n < size; n++) {
    const s = Math.sin((Math.PI * (n + 0.5)) / size);
    window[n] = Math.sin((Math.PI / 2) * s * s);
  }
  return window;
}

const WINDOW = vorbisWindow();

/** Hop-sized chunks of signal in, one spectrum (interleaved re, im over BINS bins) per chunk out. */
export class Analysis {
  /** The last FFT_SIZE samples: the previous chunk, then the current one. */
  private readonly history = new Float32Array(FFT_SIZE);
  private readonly windowed = new Float32Array(FFT_SIZE);

  constructor(private readonly fft: RealFft) {}

  /** Analyses the next HOP samples into `spectrum` (2 * BINS values). */
  push(chunk: Float32Array, spectrum: Float32Array): void {
    this.history.copyWithin(0, HOP);
    this.history.set(chunk.subarray(0, HOP), FFT_SIZE - HOP);
    for (let n = 0; n < FFT_SIZE; n++) this.windowed[n] = this.history[n] * WINDOW[n];
    this.fft.forward(this.windowed, spectrum);
    for (let i = 0; i < 2 * BINS; i++) spectrum[i] *= ANALYSIS_SCALE;
  }
}

/** Spectra in, HOP samples out per spectrum (STFT_DELAY late against the analysis' input). */
export class Synthesis {
  private readonly frame = new Float32Array(FFT_SIZE);
  /** The second half of the previous frame, waiting for the next one to be added. */
  private readonly overlap = new Float32Array(FFT_SIZE - HOP);

  constructor(private readonly fft: RealFft) {}

  push(spectrum: Float32Array, chunk: Float32Array): void {
    this.fft.inverse(spectrum, this.frame);
    for (let n = 0; n < FFT_SIZE; n++) this.frame[n] *= WINDOW[n];
    for (let n = 0; n < HOP; n++) chunk[n] = this.frame[n] + this.overlap[n];
    this.overlap.set(this.frame.subarray(HOP));
  }
}
