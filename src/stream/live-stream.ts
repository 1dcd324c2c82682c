// One live stream's enhancement: chunks of any length in, as many samples out per chunk, delayed by a
// fixed latency. The denoisers give back output sample-aligned with their input but late and in bursts;
// the stream's output starts with `latency` samples of silence, at least the most a denoiser can trail,
// so every chunk's output is there when its message goes on. Dropping the first `latency` samples of
// the joined output gives the enhanced input, sample for sample; the end hands over the held tail.
import type { Planar } from '../audio/pcm-codec';
import { ChannelDenoiser } from '../enhance/channel-denoiser';
import { loadRnnoise } from '../enhance/rnnoise';
import type { OnnxRuntimeKind } from '../enhance/onnx-runtimes';
import { LarkDenoiser } from './lark-denoiser';
import { SampleQueue } from './sample-queue';

/** The models a live stream runs: FINCH (RNNoise), LARK (DeepFilterNet3, stateful). */
export const STREAM_MODELS = ['FINCH', 'LARK'] as const;
export type StreamModel = (typeof STREAM_MODELS)[number];

export interface StreamSettings {
  rate: number;
  channels: number;
  model: StreamModel;
  /** Enhancement level 1..100, as the files take it: RNNoise's share of the mix, DeepFilterNet3's attenuation cap. */
  level: number;
  /** LARK's ONNX runtime: 'auto' (the default) takes the native one where it is installed. */
  runtime?: OnnxRuntimeKind | 'auto';
}

/** One channel's denoiser: output sample n is input sample n, given at most maxLag() samples late. */
export interface AlignedDenoiser {
  push(samples: Float32Array, frames: number): Float32Array | Promise<Float32Array>;
  /** The rest of the output, up to the input's length. */
  flush(): Float32Array | Promise<Float32Array>;
  maxLag(): number;
  destroy(): void;
}

async function createDenoiser(settings: StreamSettings): Promise<AlignedDenoiser> {
  const level = Math.min(100, Math.max(0, settings.level));
  if (settings.model === 'LARK') return LarkDenoiser.create(settings.rate, level, settings.runtime ?? 'auto');
  return ChannelDenoiser.create(await loadRnnoise(), settings.rate, level / 100);
}

/** The latency in samples: the denoisers' lag, rounded up to a whole millisecond where the rate allows. */
export function latencyFor(lag: number, rate: number): number {
  if (rate % 1000 !== 0) return lag;
  const perMs = rate / 1000;
  return Math.ceil(lag / perMs) * perMs;
}

export class LiveStream {
  private constructor(
    readonly settings: StreamSettings,
    private readonly denoisers: AlignedDenoiser[],
    /** Samples of silence the output starts with. */
    readonly latency: number,
    private readonly queues: SampleQueue[],
  ) {}

  static async create(settings: StreamSettings): Promise<LiveStream> {
    const denoisers: AlignedDenoiser[] = [];
    try {
      for (let c = 0; c < settings.channels; c++) denoisers.push(await createDenoiser(settings));
    } catch (err) {
      for (const denoiser of denoisers) denoiser.destroy();
      throw err;
    }
    const latency = latencyFor(Math.max(...denoisers.map((d) => d.maxLag())), settings.rate);
    return new LiveStream(
      settings,
      denoisers,
      latency,
      denoisers.map(() => new SampleQueue(latency)),
    );
  }

  /** A chunk's output: as many samples per channel as it brought. */
  async push(chunk: Planar, frames: number): Promise<Planar> {
    await this.feed(chunk, frames);
    return this.queues.map((queue) => queue.take(frames));
  }

  /** The last chunk's output followed by the held tail: `frames + latency` samples per channel. */
  async end(chunk: Planar, frames: number): Promise<Planar> {
    await this.feed(chunk, frames);
    for (let c = 0; c < this.denoisers.length; c++) this.queues[c].push(await this.denoisers[c].flush());
    return this.queues.map((queue) => queue.take(queue.length));
  }

  destroy(): void {
    for (const denoiser of this.denoisers) denoiser.destroy();
  }

  private async feed(chunk: Planar, frames: number): Promise<void> {
    for (let c = 0; c < this.denoisers.length; c++) {
      const out = await this.denoisers[c].push(chunk[c], frames);
      // The denoiser's view is valid until its next call: the queue copies it.
      this.queues[c].push(out);
    }
  }
}
