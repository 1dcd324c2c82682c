// LARK for a live stream: one channel through DeepFilterNet3 on its stateful graphs, frame by frame
// (dfn-stream running the network at every push on the frames it completed, no priming), resampled to
// 48 kHz and back. The first stream of a thread's session warms it before it opens (WARM_UP_SECONDS).
// Output sample n is input sample n, given at most maxLag() samples late.
import { attenuationCapDb } from '../enhance/chain-types';
import { DFN_RATE, HOP, STFT_DELAY } from '../enhance/dfn-frames';
import { CONV_LOOKAHEAD } from '../enhance/dfn-model';
import { DfnStream } from '../enhance/dfn-stream';
import type { OnnxRuntimeKind } from '../enhance/onnx-runtimes';
import { StreamResampler } from '../enhance/resampler';
import { concat, SameLength } from '../enhance/same-length';
import type { AlignedDenoiser } from './aligned-denoiser';

/**
 * Frames per run of the network, at most: every push runs the frames it completed (a 20 ms chunk brings 2),
 * so a frame is enhanced as soon as its lookahead has come, and a run's fixed cost is shared by them.
 */
const MAX_FRAMES_PER_RUN = 16;

/**
 * Seconds of audio, in 20 ms chunks, that a throwaway denoiser runs on a thread's session before its first
 * stream opens, so that the first chunks a user sends do not pay the session's first runs. On WebAssembly,
 * V8 runs onnxruntime-web's code from its quick, plain compile first and compiles each function again,
 * optimised, on other threads once it has run enough: a lone stream's first chunk cost 45-100 ms of CPU and
 * its first 100 chunks 2-10 times the later ones (p95 of its first 3 s 18-22 ms at a load of 11 on 2 cores).
 * Warmed 0.2 s, its first chunk costs 5-14 ms and that p95 8-11 ms, for 0.1-0.25 s more CPU at the open,
 * which the first answer waits for; warming longer lowers the p95 little more (1 s: 8-9 ms) for 0.5-0.6 s.
 * Chunk by chunk, as the stream runs, not in a few long runs: the code each run passes once must run often
 * enough to be optimised too. Native code needs its first runs only (its first chunk 7-9 ms of CPU without
 * them, 2-4 with). The audio is a quiet tone: the same code runs for any.
 */
export const WARM_UP_SECONDS = 0.2;
const WARM_UP_CHUNK_MS = 20;

export class LarkDenoiser implements AlignedDenoiser {
  private readonly aligned = new SameLength();

  private constructor(
    private readonly stream: DfnStream,
    private readonly rate: number,
    private readonly up?: StreamResampler,
    private readonly down?: StreamResampler,
  ) {}

  /** A denoiser whose thread's session has been warmed (once per session: later ones open at once). */
  static async create(rate: number, level: number, runtime: OnnxRuntimeKind | 'auto'): Promise<LarkDenoiser> {
    const denoiser = await LarkDenoiser.make(rate, level, runtime);
    try {
      await denoiser.stream.warmSessionOnce(() => LarkDenoiser.warmUp(rate, level, denoiser.runtime));
    } catch (error) {
      denoiser.destroy();
      throw error;
    }
    return denoiser;
  }

  private static async make(rate: number, level: number, runtime: OnnxRuntimeKind | 'auto'): Promise<LarkDenoiser> {
    const stream = await DfnStream.create(attenuationCapDb(level), {
      chunk: MAX_FRAMES_PER_RUN,
      primeFrames: 0,
      runtime,
      runEachPush: true,
    });
    if (rate === DFN_RATE) return new LarkDenoiser(stream, rate);
    // What was made goes again when a later part cannot be made.
    let up: StreamResampler | undefined;
    try {
      up = await StreamResampler.create(rate, DFN_RATE);
      return new LarkDenoiser(stream, rate, up, await StreamResampler.create(DFN_RATE, rate));
    } catch (error) {
      up?.destroy();
      stream.destroy();
      throw error;
    }
  }

  /** A throwaway denoiser on the session the stream will use runs WARM_UP_SECONDS of a quiet tone, chunk by chunk. */
  private static async warmUp(rate: number, level: number, runtime: OnnxRuntimeKind): Promise<void> {
    const throwaway = await LarkDenoiser.make(rate, level, runtime);
    try {
      const chunk = new Float32Array(Math.round((rate * WARM_UP_CHUNK_MS) / 1000));
      for (let i = 0; i < chunk.length; i++) chunk[i] = 0.01 * Math.sin((2 * Math.PI * 440 * i) / rate);
      for (let ms = 0; ms < WARM_UP_SECONDS * 1000; ms += WARM_UP_CHUNK_MS) await throwaway.push(chunk, chunk.length);
    } finally {
      throwaway.destroy();
    }
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
