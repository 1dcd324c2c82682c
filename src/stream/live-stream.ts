// One live stream's enhancement: chunks of any length in, as many samples out per chunk, delayed by a
// fixed latency. The denoisers give back output sample-aligned with their input but late and in bursts;
// the stream's output starts with `latency` samples of silence, at least the most a denoiser can trail,
// so every chunk's output is there when its message goes on. Dropping the first `latency` samples of
// the joined output gives the enhanced input, sample for sample; the end hands over the held tail.
// A denoiser whose output turns non-finite (its state has: every later output would be NaN) is replaced
// by a fresh one at once: its non-finite samples and the tail it held become silence, and the output
// stays in step with the input.
import type { Planar } from '../audio/pcm-codec';
import { ChannelDenoiser } from '../enhance/channel-denoiser';
import { loadRnnoise } from '../enhance/rnnoise';
import type { OnnxRuntimeKind } from '../enhance/onnx-runtimes';
import type { AlignedDenoiser } from './aligned-denoiser';
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

/** Sets every sample of `samples` that is NaN or infinite to 0; whether there was one. */
function silenceNonFinite(samples: Float32Array): boolean {
  let found = false;
  for (let i = 0; i < samples.length; i++) {
    const x = samples[i];
    if (x - x !== 0) {
      samples[i] = 0;
      found = true;
    }
  }
  return found;
}

export class LiveStream {
  /** Per channel, samples fed to its denoiser and samples it gave back (since its start). */
  private readonly fed: number[];
  private readonly given: number[];
  private restarts = 0;

  private constructor(
    readonly settings: StreamSettings,
    private readonly denoisers: AlignedDenoiser[],
    /** Samples of silence the output starts with. */
    readonly latency: number,
    private readonly queues: SampleQueue[],
  ) {
    this.fed = denoisers.map(() => 0);
    this.given = denoisers.map(() => 0);
  }

  static async create(settings: StreamSettings): Promise<LiveStream> {
    const denoisers = await createDenoisers(settings);
    const latency = latencyFor(Math.max(...denoisers.map((d) => d.maxLag())), settings.rate);
    return new LiveStream(
      settings,
      denoisers,
      latency,
      denoisers.map(() => new SampleQueue(latency)),
    );
  }

  /** How many times a denoiser's output turned non-finite and the stream's state started afresh. */
  get resets(): number {
    return this.restarts;
  }

  /** A chunk's output: as many samples per channel as it brought. */
  async push(chunk: Planar, frames: number): Promise<Planar> {
    await this.feed(chunk, frames);
    return this.queues.map((queue) => queue.take(frames));
  }

  /** The last chunk's output followed by the held tail: `frames + latency` samples per channel. */
  async end(chunk: Planar, frames: number): Promise<Planar> {
    await this.feed(chunk, frames);
    for (let c = 0; c < this.denoisers.length; c++) this.keep(c, await this.denoisers[c].flush());
    return this.queues.map((queue) => queue.take(queue.length));
  }

  /** Bytes the stream holds: its denoisers' buffers and state, and its queues. */
  memoryBytes(): number {
    let bytes = 0;
    for (const denoiser of this.denoisers) bytes += denoiser.memoryBytes();
    for (const queue of this.queues) bytes += queue.memoryBytes();
    return bytes;
  }

  destroy(): void {
    for (const denoiser of this.denoisers) denoiser.destroy();
  }

  private async feed(chunk: Planar, frames: number): Promise<void> {
    let broken = false;
    for (let c = 0; c < this.denoisers.length; c++) {
      this.fed[c] += frames;
      broken = this.keep(c, await this.denoisers[c].push(chunk[c], frames)) || broken;
    }
    if (broken) await this.restart();
  }

  /** Queues a denoiser's output (a view, valid until its next call: the queue copies it); whether it was broken. */
  private keep(c: number, out: Float32Array): boolean {
    this.given[c] += out.length;
    return silenceNonFinite(this.queues[c].push(out));
  }

  /**
   * Fresh denoisers for every channel (they stay in step): what the old ones still held becomes silence,
   * so the fresh one's first output sample lines up with the next input sample, as before.
   */
  private async restart(): Promise<void> {
    const fresh = await createDenoisers(this.settings);
    for (let c = 0; c < this.denoisers.length; c++) {
      this.denoisers[c].destroy();
      this.denoisers[c] = fresh[c];
      this.queues[c].push(new Float32Array(this.fed[c] - this.given[c]));
      this.fed[c] = 0;
      this.given[c] = 0;
    }
    this.restarts++;
  }
}

async function createDenoisers(settings: StreamSettings): Promise<AlignedDenoiser[]> {
  const denoisers: AlignedDenoiser[] = [];
  try {
    for (let c = 0; c < settings.channels; c++) denoisers.push(await createDenoiser(settings));
  } catch (err) {
    for (const denoiser of denoisers) denoiser.destroy();
    throw err;
  }
  return denoisers;
}
