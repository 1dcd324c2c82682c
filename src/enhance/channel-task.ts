// Stage one of the chain for some of a file's channels: the high-pass, the hum's subtraction, then noise
// reduction (RNNoise or DeepFilterNet3), written to a float WAV of those channels. Each task is
// independent, so a file's channels can be processed on several threads at once; the frame track each
// task returns is merged by the chain.
import { allocatePlanar } from '../audio/pcm-codec';
import type { WavFormat } from '../audio/wav-format';
import { openWav } from '../audio/wav-reader';
import { WavWriter } from '../audio/wav-writer';
import type { NoiseReducer } from './chain-types';
import { ChannelDenoiser } from './channel-denoiser';
import { DfnChannelDenoiser } from './dfn-channel-denoiser';
import { Dereverberator } from './dereverberator';
import { buildChannelFilters, type FilterPlan } from './filter-plan';
import { FrameTrack, type SerializedTrack } from './frame-track';
import { HumSubtractor } from './hum-subtractor';
import type { OnnxRuntimeKind } from './onnx-runtimes';
import { loadRnnoise, RNNOISE_FRAME, RNNOISE_RATE } from './rnnoise';

export interface ChannelTask {
  inputPath: string;
  outputPath: string;
  /** The input's channels this task processes, in order. */
  channels: number[];
  filters: FilterPlan;
  /** Share of the denoised signal 0..1; undefined: no noise reduction at all (and no voice track). */
  wet?: number;
  /** Which noise reduction runs (default RNNoise); DeepFilterNet3 takes its strength from `capDb`. */
  reducer?: NoiseReducer;
  /** DeepFilterNet3's attenuation cap in dB (default Infinity: none). */
  capDb?: number;
  /** DeepFilterNet3: the gain (dB) the signal is raised by before the network and lowered by after. */
  preGainDb?: number;
  /** De-reverberation's strength 0..1 before noise reduction; 0 or undefined: none. */
  dereverb?: number;
}

interface StreamDenoiser {
  push(samples: Float32Array, frames: number): Float32Array | Promise<Float32Array>;
  flush(): Float32Array | Promise<Float32Array>;
  destroy(): void;
}

export interface ChannelTaskResult {
  outputPath: string;
  channels: number[];
  track?: SerializedTrack;
  /** The ONNX runtime DeepFilterNet3 ran on (RNNoise is WebAssembly only). */
  runtime?: OnnxRuntimeKind;
}

export const FLOAT_WAV = { bitsPerSample: 32, encoding: 'float' } as const;

export async function runChannelTask(
  task: ChannelTask,
  /** Hears the share of the file's frames done (0 to 1) after each block. */
  onProgress?: (share: number) => void,
): Promise<ChannelTaskResult> {
  const source = await openWav(task.inputPath);
  const denoisers: StreamDenoiser[] = [];
  const dereverberators: Dereverberator[] = [];
  let runtime: OnnxRuntimeKind | undefined;
  let writer: WavWriter | undefined;
  try {
    const { sampleRate, channelMask } = source.layout;
    const count = task.channels.length;
    // A task with every channel makes the chain's output as it is: it keeps the speaker layout.
    const mask = count === source.layout.channels ? channelMask : 0;
    const format: WavFormat = { sampleRate, channels: count, ...FLOAT_WAV, channelMask: mask, blockAlign: count * 4 };
    writer = await WavWriter.create(task.outputPath, format);
    const filters = task.channels.map(() => buildChannelFilters(task.filters, sampleRate));
    const hum = task.filters.hum;
    const subtractors =
      hum && hum.mainsHz !== null ? task.channels.map(() => new HumSubtractor(sampleRate, hum)) : undefined;
    const track =
      task.wet === undefined
        ? undefined
        : new FrameTrack(Math.ceil((source.layout.frames * RNNOISE_RATE) / sampleRate / RNNOISE_FRAME) + 1);
    if (track && task.reducer === 'DeepFilterNet3') {
      for (let i = 0; i < count; i++) {
        const denoiser = await DfnChannelDenoiser.create(
          sampleRate,
          task.capDb ?? Infinity,
          track,
          task.preGainDb ?? 0,
        );
        runtime = denoiser.runtime;
        denoisers.push(denoiser);
      }
    } else if (track) {
      const rnnoise = await loadRnnoise();
      for (let i = 0; i < count; i++)
        denoisers.push(await ChannelDenoiser.create(rnnoise, sampleRate, task.wet!, track));
    }
    if (task.dereverb)
      for (let i = 0; i < count; i++) dereverberators.push(await Dereverberator.create(sampleRate, task.dereverb));
    const work = allocatePlanar(count, 0);
    // Progress counts what is written, not what is read: a denoiser may hold frames back for a while.
    let framesDone = 0;
    const write = async (outputs: Float32Array[]) => {
      if (outputs[0].length > 0) await writer!.write(outputs, outputs[0].length, false);
      framesDone += outputs[0].length;
      onProgress?.(Math.min(1, framesDone / Math.max(1, source.layout.frames)));
    };
    // The channels together: DeepFilterNet3's streams then ask for their runs in the same turn, and the
    // thread's one session carries them all on its batch axis (dfn-model), each exactly as alone.
    // De-reverberation comes before noise reduction: WPE's prediction needs the reverberant tail whole.
    const denoise = (filtered: Float32Array[]) =>
      Promise.all(
        filtered.map(async (input, i) => {
          const samples = dereverberators.length ? dereverberators[i].push(input, input.length) : input;
          return denoisers.length ? await denoisers[i].push(samples, samples.length) : samples;
        }),
      );
    const denoiseOnly = (dry: Float32Array[]) =>
      Promise.all(
        dry.map(async (samples, i) => (denoisers.length ? await denoisers[i].push(samples, samples.length) : samples)),
      );
    for await (const block of source.blocks()) {
      const filtered: Float32Array[] = [];
      for (let i = 0; i < count; i++) {
        work[i] = block.samples[task.channels[i]];
        filters[i].process(work[i], block.frames);
        filtered.push(subtractors ? subtractors[i].push(work[i], block.frames) : work[i].subarray(0, block.frames));
      }
      await write(await denoise(filtered));
    }
    if (subtractors) await write(await denoise(subtractors.map((subtractor) => subtractor.flush())));
    if (dereverberators.length) await write(await denoiseOnly(dereverberators.map((stage) => stage.flush())));
    if (denoisers.length) await write(await Promise.all(denoisers.map(async (denoiser) => await denoiser.flush())));
    await writer.finish();
    writer = undefined;
    return { outputPath: task.outputPath, channels: task.channels, track: track?.serialize(), runtime };
  } catch (err) {
    await writer?.abort();
    throw err;
  } finally {
    for (const denoiser of denoisers) denoiser.destroy();
    for (const stage of dereverberators) stage.destroy();
    await source.close();
  }
}
