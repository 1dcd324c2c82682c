// Loudness normalization of a WAV file: measure, apply the gain that reaches the target, limit true
// peaks to the ceiling, and measure what was written. When limiting costs loudness, the gain is raised
// and the pass repeated (at most MAX_PASSES), so the target is met wherever the ceiling allows it.
import { copyFile, rename, rm } from 'node:fs/promises';
import { LoudnessMeter, type LoudnessMeasurement } from './loudness-meter';
import { measureWavFile } from './measure';
import { allocatePlanar } from './pcm-codec';
import { TruePeakLimiter } from './true-peak-limiter';
import type { WavFormat } from './wav-format';
import { BLOCK_FRAMES, openWav } from './wav-reader';
import { WavWriter } from './wav-writer';

export interface NormalizeOptions {
  targetLufs: number;
  ceilingDbtp: number;
  /** Sample format of the output; default: the input's. */
  outputFormat?: Pick<WavFormat, 'bitsPerSample' | 'encoding'>;
}

export interface NormalizeReport {
  input: LoudnessMeasurement;
  output: LoudnessMeasurement;
  /** Gain applied before the limiter (dB). */
  gainDb: number;
  /** Deepest gain reduction of the limiter (dB, 0 when it never acted). */
  limiterReductionDb: number;
  passes: number;
  /** Set when the input was left as it was, and why. */
  unchangedBecause?: string;
}

const MAX_PASSES = 3;
/** Aim this far under the ceiling: room for rounding and dither. */
const CEILING_MARGIN_DB = 0.05;
/** Below this many LU under the target after limiting, another pass raises the gain. */
const TARGET_TOLERANCE_LU = 0.2;

export async function normalizeWavFile(inputPath: string, outputPath: string, options: NormalizeOptions): Promise<NormalizeReport> {
  const input = await measureWavFile(inputPath);
  if (!Number.isFinite(input.integratedLufs)) {
    await copyFile(inputPath, outputPath);
    return { input, output: input, gainDb: 0, limiterReductionDb: 0, passes: 0, unchangedBecause: 'the input is silent or below the -70 LUFS gate: returned unchanged, never amplified' };
  }
  const temp = `${outputPath}.${process.pid}.part`;
  try {
    let gainDb = options.targetLufs - input.integratedLufs;
    let ceilingDb = options.ceilingDbtp - CEILING_MARGIN_DB;
    let pass: PassResult | undefined;
    let passes = 0;
    while (passes < MAX_PASSES) {
      passes++;
      pass = await gainAndLimit(inputPath, temp, gainDb, ceilingDb, options.outputFormat);
      const { integratedLufs, truePeakDbtp } = pass.output;
      if (truePeakDbtp > options.ceilingDbtp) ceilingDb -= truePeakDbtp - options.ceilingDbtp + CEILING_MARGIN_DB;
      else if (pass.minGain < 1 && integratedLufs < options.targetLufs - TARGET_TOLERANCE_LU) gainDb += options.targetLufs - integratedLufs;
      else break;
    }
    await rename(temp, outputPath);
    return { input, output: pass!.output, gainDb, limiterReductionDb: -20 * Math.log10(pass!.minGain), passes };
  } finally {
    await rm(temp, { force: true });
  }
}

interface PassResult {
  output: LoudnessMeasurement;
  minGain: number;
}

async function gainAndLimit(inputPath: string, outputPath: string, gainDb: number, ceilingDb: number, outputFormat: NormalizeOptions['outputFormat']): Promise<PassResult> {
  const source = await openWav(inputPath);
  let writer: WavWriter | undefined;
  try {
    const { layout } = source;
    const bitsPerSample = outputFormat?.bitsPerSample ?? layout.bitsPerSample;
    const format: WavFormat = { ...layout, ...outputFormat, blockAlign: layout.channels * (bitsPerSample / 8) };
    writer = await WavWriter.create(outputPath, format);
    const limiter = new TruePeakLimiter({ sampleRate: layout.sampleRate, channels: layout.channels, gainDb, ceilingDb });
    const meter = new LoudnessMeter(layout.sampleRate, layout.channels, layout.channelMask);
    const out = allocatePlanar(layout.channels, BLOCK_FRAMES);
    // Rounding a changed signal to 16 bits or fewer is dithered; 24 bits and float need none.
    const dither = format.encoding === 'int' && format.bitsPerSample <= 16;
    const emit = async (frames: number) => {
      if (frames === 0) return;
      await writer!.write(out, frames, dither);
      meter.add(out, frames); // what the file now holds, after rounding
    };
    for await (const block of source.blocks()) await emit(limiter.process(block.samples, block.frames, out));
    await emit(limiter.flush(out));
    await writer.finish();
    writer = undefined;
    return { output: meter.finish(), minGain: limiter.minGain };
  } catch (err) {
    await writer?.abort();
    throw err;
  } finally {
    await source.close();
  }
}
