// One channel through noise reduction, streamed: to 48 kHz, RNNoise frame by frame, the denoised
// signal mixed with the original in the share the enhancement level sets, back to the file's rate.
// The original is delayed by RNNoise's latency before the mix, and the output is cut to the input's
// length, so output sample n is input sample n: no comb filter in the mix, no shift in the file.
import type { FrameTrack } from './frame-track';
import { StreamResampler } from './resampler';
import { RNNOISE_FRAME, RNNOISE_LATENCY, RNNOISE_RATE, type FrameDenoiser, type Rnnoise } from './rnnoise';
import { concat, SameLength } from './same-length';

export class ChannelDenoiser {
  private readonly frame = new Float32Array(RNNOISE_FRAME);
  private readonly previous = new Float32Array(RNNOISE_FRAME);
  private readonly denoised = new Float32Array(RNNOISE_FRAME);
  private filled = 0;
  /** Frames given to RNNoise; output frame k is ready once frame k+1 went in. */
  private framesIn = 0;
  private mixed: Float32Array = new Float32Array(RNNOISE_FRAME * 16);
  private mixedLength = 0;
  private readonly aligned = new SameLength();

  private constructor(
    private readonly denoiser: FrameDenoiser,
    /** Share of the denoised signal, 0..1. */
    private readonly wet: number,
    /** Per frame, the voice and energy (the files' leveler and report); a live stream keeps none. */
    private readonly track: FrameTrack | undefined,
    private readonly up?: StreamResampler,
    private readonly down?: StreamResampler,
  ) {}

  static async create(rnnoise: Rnnoise, sampleRate: number, wet: number, track?: FrameTrack): Promise<ChannelDenoiser> {
    const resample = sampleRate !== RNNOISE_RATE;
    const up = resample ? await StreamResampler.create(sampleRate, RNNOISE_RATE) : undefined;
    const down = resample ? await StreamResampler.create(RNNOISE_RATE, sampleRate) : undefined;
    return new ChannelDenoiser(rnnoise.createDenoiser(), wet, track, up, down);
  }

  /**
   * The most samples (at the channel's rate) by which the output pushed so far can trail the input:
   * the up-resampler's filter, a partial RNNoise frame, RNNoise's frame of latency and the
   * down-resampler's filter, plus a sample of rounding each way. A live stream delays its output by this.
   */
  maxLag(): number {
    const ratio = RNNOISE_RATE / (this.up?.inputRate ?? RNNOISE_RATE);
    const at48 = RNNOISE_FRAME - 1 + RNNOISE_LATENCY + (this.down?.inputLatency ?? 0);
    return (this.up?.inputLatency ?? 0) + Math.ceil(at48 / ratio) + 2;
  }

  /** Takes `frames` samples at the file's rate; returns the output ready so far (a view, valid until the next call). */
  push(samples: Float32Array, frames: number): Float32Array {
    this.aligned.took(frames);
    this.mixedLength = 0;
    this.feed(this.up ? this.up.push(samples, frames) : samples.subarray(0, frames));
    return this.aligned.give(
      this.down ? this.down.push(this.mixed, this.mixedLength) : this.mixed.subarray(0, this.mixedLength),
    );
  }

  /** The rest of the output: the last partial frame, RNNoise's frame of latency and the resamplers' tails. */
  flush(): Float32Array {
    this.mixedLength = 0;
    if (this.up) this.feed(this.up.flush());
    const wanted = this.framesIn * RNNOISE_FRAME + this.filled; // samples at 48 kHz that carry the input
    if (this.filled > 0) this.feed(new Float32Array(RNNOISE_FRAME - this.filled));
    this.feed(new Float32Array(RNNOISE_FRAME)); // pushes out the last frame RNNoise still holds
    const mixed48 = (this.framesIn - 1) * RNNOISE_FRAME; // what the mix has made in all
    this.mixedLength -= Math.max(0, mixed48 - wanted); // the zero padding is not output
    let tail: Float32Array = this.mixed.subarray(0, this.mixedLength);
    if (this.down) {
      const pushed = this.down.push(tail, tail.length);
      const rest = this.down.flush();
      tail = concat(pushed, rest);
    }
    return this.aligned.giveLast(tail);
  }

  /** Bytes of the buffers and RNNoise state it holds (a live stream's memory). */
  memoryBytes(): number {
    const own = this.frame.byteLength + this.previous.byteLength + this.denoised.byteLength + this.mixed.byteLength;
    return own + this.denoiser.memoryBytes + (this.up?.memoryBytes() ?? 0) + (this.down?.memoryBytes() ?? 0);
  }

  destroy(): void {
    this.denoiser.destroy();
    this.up?.destroy();
    this.down?.destroy();
  }

  private feed(samples: Float32Array): void {
    for (let offset = 0; offset < samples.length;) {
      const n = Math.min(RNNOISE_FRAME - this.filled, samples.length - offset);
      this.frame.set(samples.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      if (this.filled === RNNOISE_FRAME) {
        this.processFrame();
        this.filled = 0;
      }
    }
  }

  /** RNNoise's output now is the previous frame, denoised: mix it with that frame as it was. */
  private processFrame(): void {
    const voice = this.denoiser.process(this.frame, this.denoised);
    if (this.framesIn > 0) {
      if (this.mixedLength + RNNOISE_FRAME > this.mixed.length)
        this.mixed = grow(this.mixed, this.mixedLength + RNNOISE_FRAME);
      const out = this.mixed;
      const dry = 1 - this.wet;
      let before = 0;
      let after = 0;
      for (let i = 0, j = this.mixedLength; i < RNNOISE_FRAME; i++, j++) {
        const original = this.previous[i];
        const value = this.wet * this.denoised[i] + dry * original;
        out[j] = value;
        before += original * original;
        after += value * value;
      }
      this.mixedLength += RNNOISE_FRAME;
      this.track?.add(this.framesIn - 1, voice, before / RNNOISE_FRAME, after / RNNOISE_FRAME);
    }
    this.previous.set(this.frame);
    this.framesIn++;
  }
}

function grow(array: Float32Array, least: number): Float32Array {
  const bigger = new Float32Array(Math.max(least, array.length * 2));
  bigger.set(array);
  return bigger;
}
