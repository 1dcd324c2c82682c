// One channel through DeepFilterNet3, streamed: to 48 kHz, the network in blocks (dfn-stream), back to
// the file's rate; output sample n is input sample n. Per 10 ms frame the frame track gets the energy
// before and after and a voice probability made from the network's local SNR estimate.
import { DFN_RATE, HOP } from './dfn-frames';
import { DfnStream } from './dfn-stream';
import type { FrameTrack } from './frame-track';
import { StreamResampler } from './resampler';

/**
 * The local SNR (dB) at which a frame counts as even odds speech, and how steeply the odds change: a
 * logistic curve, so the leveler's 0.5 threshold falls on 0 dB of local SNR.
 */
const VOICE_LSNR_DB = 0;
const VOICE_SLOPE_DB = 2;
export const voiceFromLsnr = (lsnrDb: number) => 1 / (1 + Math.exp(-(lsnrDb - VOICE_LSNR_DB) / VOICE_SLOPE_DB));

export class DfnChannelDenoiser {
  /** Per 48 kHz frame not yet in the track: the energy going in, and the network's local SNR. */
  private readonly energiesIn: number[] = [];
  private inputPartial = { sum: 0, count: 0 };
  private outputPartial = { sum: 0, count: 0 };
  private trackFrames = 0;
  private inputFrames = 0;
  private outputFrames = 0;

  private constructor(
    private readonly stream: DfnStream,
    /** The network's local SNR per frame, from the first not yet in the track on. */
    private readonly lsnrs: number[],
    private readonly track: FrameTrack,
    private readonly up?: StreamResampler,
    private readonly down?: StreamResampler,
  ) {}

  /** `capDb`: the most the noise is pulled down (Infinity: no cap). */
  static async create(sampleRate: number, capDb: number, track: FrameTrack): Promise<DfnChannelDenoiser> {
    const resample = sampleRate !== DFN_RATE;
    const lsnrs: number[] = [];
    const stream = await DfnStream.create(capDb, undefined, (_frame, lsnr) => lsnrs.push(lsnr));
    return new DfnChannelDenoiser(
      stream,
      lsnrs,
      track,
      resample ? await StreamResampler.create(sampleRate, DFN_RATE) : undefined,
      resample ? await StreamResampler.create(DFN_RATE, sampleRate) : undefined,
    );
  }

  /** Takes `frames` samples at the file's rate; returns the output ready so far (valid until the next call). */
  async push(samples: Float32Array, frames: number): Promise<Float32Array> {
    this.inputFrames += frames;
    const at48 = this.up ? this.up.push(samples, frames) : samples.subarray(0, frames);
    this.measureInput(at48);
    const out48 = await this.stream.push(at48, at48.length);
    this.measureOutput(out48, false);
    return this.emit(this.down ? this.down.push(out48, out48.length) : out48);
  }

  /** The rest of the output: the stream's and the resamplers' tails. */
  async flush(): Promise<Float32Array> {
    let out48: Float32Array;
    if (this.up) {
      const tail = this.up.flush();
      this.measureInput(tail);
      out48 = concat(await this.stream.push(tail, tail.length), await this.stream.flush());
    } else out48 = await this.stream.flush();
    if (this.inputPartial.count > 0) this.energiesIn.push(this.inputPartial.sum / this.inputPartial.count);
    this.measureOutput(out48, true);
    let out = out48;
    if (this.down) out = concat(this.down.push(out48, out48.length), this.down.flush());
    const missing = this.inputFrames - this.outputFrames - out.length; // a resampler rounds a sample short
    return this.emit(missing > 0 ? concat(out, new Float32Array(missing)) : out);
  }

  destroy(): void {
    this.stream.destroy();
    this.up?.destroy();
    this.down?.destroy();
  }

  private measureInput(samples: Float32Array): void {
    for (const s of samples) {
      this.inputPartial.sum += s * s;
      if (++this.inputPartial.count === HOP) {
        this.energiesIn.push(this.inputPartial.sum / HOP);
        this.inputPartial = { sum: 0, count: 0 };
      }
    }
  }

  /** Output frame j carries input frame j, covered by the network's frames j and j + 1. */
  private measureOutput(samples: Float32Array, last: boolean): void {
    const addFrame = (energyAfter: number) => {
      const j = this.trackFrames++;
      const lsnr = Math.max(this.lsnrs[0] ?? -15, this.lsnrs[1] ?? -15);
      this.lsnrs.shift();
      this.track.add(j, voiceFromLsnr(lsnr), this.energiesIn.shift() ?? 0, energyAfter);
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

  private emit(samples: Float32Array): Float32Array {
    const n = Math.min(samples.length, this.inputFrames - this.outputFrames);
    this.outputFrames += n;
    return samples.subarray(0, n);
  }
}

function concat(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
