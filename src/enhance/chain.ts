// The speech-enhancement chain that runs before loudness normalization, on a WAV file, streamed:
//   1. (LARK_V2) find mains hum in the file;
//   2. per channel: high-pass, hum subtraction, de-reverberation when asked, noise reduction (channel-task): RNNoise mixed by the level
//      (FINCH) or DeepFilterNet3 with the level's attenuation cap (LARK, LARK_V2); channels split among
//      the threads the caller can lend (DeepFilterNet3: two channels to a thread, one batch of its session);
//   3. (LARK, LARK_V2) the leveler, on all channels alike, while the channels are put back together.
// The output is a 32-bit float WAV at the input's rate, channels and length, sample-aligned with it.
import { rename, rm } from 'node:fs/promises';
import { allocatePlanar } from '../audio/pcm-codec';
import type { WavFormat } from '../audio/wav-format';
import { openWav, type WavSource } from '../audio/wav-reader';
import { WavWriter } from '../audio/wav-writer';
import {
  attenuationCapDb,
  noiseReducerOf,
  stagesOf,
  type ChainStages,
  type EnhanceOptions,
  type NoiseReducer,
} from './chain-types';
import { RNNOISE_FRAME, RNNOISE_RATE } from './rnnoise';
import { FLOAT_WAV, runChannelTask, type ChannelTask, type ChannelTaskResult } from './channel-task';
import { findHum, planFilters, type HumFinding } from './filter-plan';
import { FrameTrack } from './frame-track';
import { voiceFromEnergy } from './energy-voice';
import { LevelerGain, planLeveler, type LevelerFigures, type LevelerPlan } from './leveler';
import { preGainDb, surveyChannels } from './channel-survey';
import type { OnnxRuntimeKind } from './onnx-runtimes';

export interface EnhanceRun {
  /** Threads the chain may use for one file's channels, its own included (default 1). */
  threads?: number;
  /**
   * Channels one thread runs together (default: DFN_CHANNELS_PER_THREAD for DeepFilterNet3, whose session
   * runs them as one batch; 1 otherwise). The benchmark sets 1 to measure a thread per channel.
   */
  channelsPerThread?: number;
  /** Runs a channel task on another thread; resolves undefined when none is free (the chain then runs it itself). */
  runElsewhere?(task: ChannelTask): Promise<unknown>;
  /**
   * Hears the share of the file enhanced (0 to 1), as this thread's own channels go: the channels lent
   * to other threads go at about the same pace.
   */
  onProgress?: (share: number) => void;
}

export interface EnhanceReport {
  stages: ChainStages;
  noiseReducer: NoiseReducer;
  /** The ONNX runtime DeepFilterNet3 ran on ('native': onnxruntime-node; 'wasm': WebAssembly); RNNoise is 'wasm'. */
  runtime: OnnxRuntimeKind;
  /** RNNoise: the share of the denoised signal (0..1); 1 for DeepFilterNet3. */
  wet: number;
  /** DeepFilterNet3: the most noise was pulled down (dB); null without a cap or with RNNoise. */
  attenuationCapDb: number | null;
  highPassHz: number | null;
  /** De-reverberation's strength (0..1); absent: none. */
  dereverb?: number;
  hum: HumFinding | null;
  /** How much lower the noise floor (the quietest tenth of the file) is after noise reduction (dB). */
  noiseFloorReductionDb: number | null;
  leveler: LevelerFigures | null;
  /** Threads the channels were processed on. */
  threads: number;
  /** A stereo file's two channels were one signal: processed once, the result written to both. */
  twinChannels?: boolean;
  /** Voice activity (0 to 1) per frame of `frameSeconds` from the file's start, as the chain measured it. */
  voice?: { perFrame: Float32Array; frameSeconds: number };
}

export async function enhanceWavFile(
  inputPath: string,
  outputPath: string,
  options: EnhanceOptions,
  run: EnhanceRun = {},
): Promise<EnhanceReport> {
  const stages = { ...stagesOf(options.model), ...options.stages };
  const reducer = options.noiseReducer ?? noiseReducerOf(options.model);
  const level = Math.min(100, Math.max(0, options.level));
  const capDb = attenuationCapDb(level);
  const wet = !stages.denoise ? 0 : reducer === 'RNNoise' ? level / 100 : 1;
  const source = await openWav(inputPath);
  const { channels, channelMask } = source.layout;
  const hum = stages.humRemoval ? await findHum(source) : null;
  // DeepFilterNet3 is worth a look first: a stereo file of one signal twice is denoised once, a quiet
  // file is raised for the network (channel-survey).
  const survey = stages.denoise && reducer === 'DeepFilterNet3' ? await surveyChannels(source) : undefined;
  const twins = survey?.twins ?? false;
  await source.close();
  const filters = planFilters(stages.highpass, hum);

  // The voice track is needed for noise reduction and for the leveler alike.
  const needsTrack = stages.denoise || stages.leveler;
  const perThread =
    run.channelsPerThread ?? (stages.denoise && reducer === 'DeepFilterNet3' ? DFN_CHANNELS_PER_THREAD : 1);
  const threads = threadsFor(channels, run.threads ?? 1, perThread);
  const groups = twins ? [[0]] : splitChannels(channels, threads);
  const tasks: ChannelTask[] = groups.map((group) => ({
    inputPath,
    outputPath: `${outputPath}.ch${group[0]}.wav`,
    channels: group,
    filters,
    wet: needsTrack ? wet : undefined,
    reducer: stages.denoise ? reducer : 'RNNoise',
    capDb,
    preGainDb: preGainDb(survey?.speechLevelDb ?? null),
    dereverb: options.dereverb,
  }));
  try {
    const elsewhere = async (task: ChannelTask) =>
      ((await run.runElsewhere?.(task)) as ChannelTaskResult | undefined) ?? runChannelTask(task);
    // Every task ends before the chain does, failed or not, so no task writes after the clean-up.
    const settled = await Promise.allSettled(
      tasks.map((task, i) => (i === 0 ? runChannelTask(task, run.onProgress) : elsewhere(task))),
    );
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    const results = settled.map((outcome) => (outcome as PromiseFulfilledResult<ChannelTaskResult>).value);
    const [first, ...others] = results.map((result) => result.track);
    const track = first ? FrameTrack.adopt(first) : new FrameTrack(0);
    for (const other of others) track.merge(other!);
    // Behind DeepFilterNet3 the voice is read from the denoised signal (no second network run for it).
    if (stages.leveler && stages.denoise && reducer === 'DeepFilterNet3')
      voiceFromEnergy(track.energy, track.frames, track.voice);
    const leveler = stages.leveler ? planLeveler(track) : null;
    if (results.length === 1 && !leveler && !twins) await rename(results[0].outputPath, outputPath);
    else await joinChannels(results, { channels, channelMask }, outputPath, leveler, twins);
    return {
      stages,
      noiseReducer: reducer,
      // Every thread finds the same runtime; one that ran natively says so.
      runtime: results.some((result) => result.runtime === 'native') ? 'native' : 'wasm',
      wet,
      attenuationCapDb: stages.denoise && reducer === 'DeepFilterNet3' && Number.isFinite(capDb) ? capDb : null,
      highPassHz: filters.highPassHz,
      ...(options.dereverb ? { dereverb: options.dereverb } : {}),
      hum,
      noiseFloorReductionDb: stages.denoise ? track.noiseFloorReductionDb() : null,
      twinChannels: twins,
      leveler: leveler && {
        targetDb: leveler.targetDb,
        minGainDb: leveler.minGainDb,
        maxGainDb: leveler.maxGainDb,
        speechShare: leveler.speechShare,
      },
      threads: results.length,
      voice: { perFrame: track.voice.subarray(0, track.frames), frameSeconds: RNNOISE_FRAME / RNNOISE_RATE },
    };
  } finally {
    await Promise.all(tasks.map((task) => rm(task.outputPath, { force: true })));
  }
}

/**
 * DeepFilterNet3's channels that one thread runs together, as one batch of its session (dfn-model). A
 * thread per channel holds a runtime and session per thread; one thread at batch 2 measured (the LARK_V2
 * chain on 2 minutes of 44.1 kHz stereo, bench/dfn-frames.bench.ts) 0.43 times the peak memory and 0.81
 * times the CPU time on WebAssembly (+173 MiB against +398), 0.90 and 0.83 times native (+119 against
 * +132). One file takes 1.3-1.4 times as long by the clock on a quiet machine; the other worker stays free.
 */
export const DFN_CHANNELS_PER_THREAD = 2;

/** Threads for a file's channels: as many as may be lent, up to one per `perThread` channels. */
function threadsFor(channels: number, lendable: number, perThread: number): number {
  return Math.max(1, Math.min(lendable, Math.ceil(channels / perThread)));
}

/** Channels dealt out round-robin into `count` groups. */
function splitChannels(channels: number, count: number): number[][] {
  const groups: number[][] = Array.from({ length: count }, () => []);
  for (let c = 0; c < channels; c++) groups[c % count].push(c);
  return groups;
}

/**
 * Puts the tasks' channels back in their places, applying the leveler's gain to all of them alike;
 * `twins`: the one channel processed is written to both of a stereo file.
 */
async function joinChannels(
  results: ChannelTaskResult[],
  { channels, channelMask }: { channels: number; channelMask: number },
  outputPath: string,
  leveler: LevelerPlan | null,
  twins = false,
): Promise<void> {
  const sources: WavSource[] = [];
  let writer: WavWriter | undefined;
  try {
    for (const result of results) sources.push(await openWav(result.outputPath));
    const { sampleRate } = sources[0].layout;
    const format: WavFormat = { sampleRate, channels, ...FLOAT_WAV, channelMask, blockAlign: channels * 4 };
    writer = await WavWriter.create(outputPath, format);
    const gain = leveler ? new LevelerGain(leveler, sampleRate) : undefined;
    const out = allocatePlanar(channels, 0);
    const readers = sources.map((source) => source.blocks()[Symbol.asyncIterator]());
    for (;;) {
      const blocks = await Promise.all(readers.map((reader) => reader.next()));
      if (blocks[0].done) break;
      const frames = blocks[0].value.frames;
      blocks.forEach((block, i) =>
        results[i].channels.forEach((channel, j) => (out[channel] = block.value!.samples[j])),
      );
      if (twins) out[1] = out[0].slice(0, frames);
      gain?.apply(out, frames);
      await writer.write(out, frames, false);
    }
    await writer.finish();
    writer = undefined;
  } catch (err) {
    await writer?.abort();
    throw err;
  } finally {
    await Promise.all(sources.map((source) => source.close()));
  }
}
