// LARK for a live stream: one channel through DeepFilterNet3 on its stateful graphs, frame by frame
// (dfn-stream running the network at every push on the frames it completed, no priming), resampled to
// 48 kHz and back.
// Output sample n is input sample n, given at most maxLag() samples late.
import { attenuationCapDb } from '../enhance/chain-types';
import { DFN_RATE, HOP, STFT_DELAY } from '../enhance/dfn-frames';
import { CONV_LOOKAHEAD } from '../enhance/dfn-model';
import { DfnStream } from '../enhance/dfn-stream';
import type { OnnxRuntimeKind } from '../enhance/onnx-runtimes';
import { StreamResampler } from '../enhance/resampler';
import { concat, SameLength } from '../enhance/same-length';
import type { AlignedDenoiser } from './live-stream';

/**
 * Frames per run of the network, at most: every push runs the frames it completed (a 20 ms chunk brings 2),
 * so a frame is enhanced as soon as its lookahead has come, and a run's fixed cost is shared by them.
 */
const MAX_FRAMES_PER_RUN = 16;

export class LarkDenoiser implements AlignedDenoiser {
  private readonly aligned = new SameLength();

  private constructor(
    private readonly stream: DfnStream,
    private readonly rate: number,
    private readonly up?: StreamResampler,
    private readonly down?: StreamResampler,
  ) {}

  static async create(rate: number, level: number, runtime: OnnxRuntimeKind | 'auto'): Promise<LarkDenoiser> {
    const stream = await DfnStream.create(attenuationCapDb(level), {
      chunk: MAX_FRAMES_PER_RUN,
      primeFrames: 0,
      runtime,
      runEachPush: true,
    });
    const resample = rate !== DFN_RATE;
    return new LarkDenoiser(
      stream,
      rate,
      resample ? await StreamResampler.create(rate, DFN_RATE) : undefined,
      resample ? await StreamResampler.create(DFN_RATE, rate) : undefined,
    );
  }

  get runtime(): OnnxRuntimeKind {
    return this.stream.runtime;
  }

  /**
   * At 48 kHz: a partial hop, the newest whole frame, the network's lookahead and the STFT's delay; plus
   * the resamplers' filters and a sample of rounding each way. (Every push runs the frames it completed,
   * so none waits for a run.)
   */
  maxLag(): number {
    const ratio = DFN_RATE / this.rate;
    const at48 = HOP - 1 + (1 + CONV_LOOKAHEAD) * HOP + STFT_DELAY + (this.down?.inputLatency ?? 0);
    return (this.up?.inputLatency ?? 0) + Math.ceil(at48 / ratio) + 2;
  }

  async push(samples: Float32Array, frames: number): Promise<Float32Array> {
    this.aligned.took(frames);
    const at48 = this.up ? this.up.push(samples, frames) : samples.subarray(0, frames);
    const out48 = await this.stream.push(at48, at48.length);
    return this.aligned.give(this.down ? this.down.push(out48, out48.length) : out48);
  }

  async flush(): Promise<Float32Array> {
    let tail: Float32Array = new Float32Array(0);
    if (this.up) {
      const rest = this.up.flush();
      tail = (await this.stream.push(rest, rest.length)).slice();
    }
    tail = concat(tail, await this.stream.flush());
    if (this.down) tail = concat(this.down.push(tail, tail.length), this.down.flush());
    return this.aligned.giveLast(tail);
  }

  memoryBytes(): number {
    return this.stream.memoryBytes() + (this.up?.memoryBytes() ?? 0) + (this.down?.memoryBytes() ?? 0);
  }

  destroy(): void {
    this.stream.destroy();
    this.up?.destroy();
    this.down?.destroy();
  }
}
