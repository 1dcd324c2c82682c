// One channel through DeepFilterNet3, streamed: to 48 kHz, the network frame by frame (dfn-stream), back to
// the file's rate; output sample n is input sample n. Per 10 ms frame the frame track gets the energy
// before and after; its voice is left for the chain to find in the denoised energy (energy-voice.ts).
import { DFN_RATE, HOP } from './dfn-frames';
import { DfnStream } from './dfn-stream';
import type { OnnxRuntimeKind } from './onnx-runtimes';
import type { FrameTrack } from './frame-track';
import { StreamResampler } from './resampler';
import { concat, SameLength } from './same-length';

export class DfnChannelDenoiser {
  /** Per 48 kHz frame not yet in the track: the energy going in. */
  private readonly energiesIn: number[] = [];
  private inputPartial = { sum: 0, count: 0 };
  private outputPartial = { sum: 0, count: 0 };
  private trackFrames = 0;
  private readonly aligned = new SameLength();

  private raised = new Float32Array(0);

  private constructor(
    private readonly stream: DfnStream,
    private readonly track: FrameTrack,
    private readonly preGain: number,
    private readonly up?: StreamResampler,
    private readonly down?: StreamResampler,
  ) {}

  /**
   * `capDb`: the most the noise is pulled down (Infinity: no cap); `preGainDb`: the signal is raised by
   * this much for the network and lowered by as much after (channel-survey).
   */
  static async create(
    sampleRate: number,
    capDb: number,
    track: FrameTrack,
    preGainDb = 0,
  ): Promise<DfnChannelDenoiser> {
    const resample = sampleRate !== DFN_RATE;
    return new DfnChannelDenoiser(
      await DfnStream.create(capDb),
      track,
      10 ** (preGainDb / 20),
      resample ? await StreamResampler.create(sampleRate, DFN_RATE) : undefined,
      resample ? await StreamResampler.create(DFN_RATE, sampleRate) : undefined,
    );
  }

  /** The ONNX runtime the network runs on. */
  get runtime(): OnnxRuntimeKind {
    return this.stream.runtime;
  }

  /** Takes `frames` samples at the file's rate; returns the output ready so far (valid until the next call). */
  async push(samples: Float32Array, frames: number): Promise<Float32Array> {
    this.aligned.took(frames);
    const at48 = this.raise(this.up ? this.up.push(samples, frames) : samples.subarray(0, frames));
    this.measureInput(at48);
    const out48 = this.lower(await this.stream.push(at48, at48.length));
    this.measureOutput(out48, false);
    return this.aligned.give(this.down ? this.down.push(out48, out48.length) : out48);
  }

  /** The rest of the output: the stream's and the resamplers' tails. */
  async flush(): Promise<Float32Array> {
    let out48: Float32Array;
    if (this.up) {
      const tail = this.raise(this.up.flush());
      this.measureInput(tail);
      // The push's output is a view of the stream's buffer, which its flush writes over: copied first.
      const pushed = (await this.stream.push(tail, tail.length)).slice();
      out48 = this.lower(concat(pushed, await this.stream.flush()));
    } else out48 = this.lower(await this.stream.flush());
    if (this.inputPartial.count > 0) this.energiesIn.push(this.inputPartial.sum / this.inputPartial.count);
    this.measureOutput(out48, true);
    let out = out48;
    if (this.down) out = concat(this.down.push(out48, out48.length), this.down.flush());
    return this.aligned.giveLast(out);
  }

  destroy(): void {
    this.stream.destroy();
    this.up?.destroy();
    this.down?.destroy();
  }

  /** A copy raised by the pre-gain (the caller's samples stay as they are). */
  private raise(samples: Float32Array): Float32Array {
    if (this.preGain === 1) return samples;
    if (this.raised.length < samples.length) this.raised = new Float32Array(samples.length);
    const out = this.raised.subarray(0, samples.length);
    for (let i = 0; i < samples.length; i++) out[i] = samples[i] * this.preGain;
    return out;
  }

  /** The stream's output (its own buffer) lowered by the pre-gain again, in place. */
  private lower(samples: Float32Array): Float32Array {
    if (this.preGain !== 1) for (let i = 0; i < samples.length; i++) samples[i] /= this.preGain;
    return samples;
  }

  private measureInput(samples: Float32Array): void {
    for (const s of samples) {
      this.inputPartial.sum += (s * s) / (this.preGain * this.preGain); // the energy at the file's level
      if (++this.inputPartial.count === HOP) {
        this.energiesIn.push(this.inputPartial.sum / HOP);
        this.inputPartial = { sum: 0, count: 0 };
      }
    }
  }

  /** Output frame j carries input frame j. */
  private measureOutput(samples: Float32Array, last: boolean): void {
    const addFrame = (energyAfter: number) => {
      this.track.add(this.trackFrames++, 0, this.energiesIn.shift() ?? 0, energyAfter);
    };
    for (const s of samples) {
      this.outputPartial.sum += s * s;
      if (++this.outputPartial.count === HOP) {
        addFrame(this.outputPartial.sum / HOP);
        this.outputPartial = { sum: 0, count: 0 };
      }
    }
    if (last && this.outputPartial.count > 0) addFrame(this.outputPartial.sum / this.outputPartial.count);
  }
}
