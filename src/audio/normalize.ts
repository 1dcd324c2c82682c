// Loudness normalization of a WAV file: measure, apply the gain that reaches the target, limit true
// peaks to the ceiling, and measure what was written. Limiting costs loudness, so the gain is then
// corrected and the pass repeated until the output lands on the target. The limiter may take at most
// `maxLimitingDb` off the loudest peak: a target that needs more is left unreached (and said so) rather
// than reached by squashing the sound.
// Each pass measures the loudness alone as it writes; the true peak of the gain kept is read once from the
// file written, and the passes after the first skip every stretch whose peaks an earlier one found under
// the ceiling (envelope-bounds).
import { copyFile, rename, rm } from 'node:fs/promises';
import { EnvelopeBounds } from './envelope-bounds';
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
  /** Most gain reduction the limiter may apply to the loudest peak (dB). Default DEFAULT_MAX_LIMITING_DB. */
  maxLimitingDb?: number;
  /** Sample format of the output; default: the input's. */
  outputFormat?: Pick<WavFormat, 'bitsPerSample' | 'encoding'>;
  /** The input's measurement when the caller has it already (it is not read again for it). */
  input?: LoudnessMeasurement;
  /** The gain to try first (dB), when the caller knows better than the input's distance to the target. */
  firstGainDb?: number;
  /** What passes over the same input learnt of its peaks (kept by a caller that normalizes it again). */
  knownPeaks?: EnvelopeBounds;
  /** The limiter's look-ahead and attack (ms); default the limiter's (5 ms). */
  lookaheadMs?: number;
  /**
   * false: the output's true peak is not measured (it reads -Infinity), for a caller that measures what it
   * makes of the output instead (an encoder's file). Default true: it is, and kept under the ceiling.
   */
  measureOutputPeaks?: boolean;
  /**
   * Hears how far it is (0 to 1) after each pass over the file: the measurement, then each gain pass
   * (speech usually takes two or three, then one that writes: the later ones add nothing).
   */
  onProgress?: (share: number) => void;
}

export interface NormalizeReport {
  input: LoudnessMeasurement;
  output: LoudnessMeasurement;
  /** Gain applied before the limiter (dB). */
  gainDb: number;
  /** Deepest gain reduction of the limiter (dB, 0 when it never acted). */
  limiterReductionDb: number;
  /** Passes of gain and limiting over the file. */
  passes: number;
  /** The loudness gained per dB of gain near the gain kept (1 without limiting, less the more it limits). */
  lufsPerDb: number;
  /** The output is within TARGET_TOLERANCE_LU of the target; false when the bound on limiting (or silence) stopped it. */
  targetReached: boolean;
  /** Set when the input was left as it was, and why. */
  unchangedBecause?: string;
}

/**
 * Enough for speech at -16 LUFS under -1 dBTP (the podcast norm) even with sharp, synthetic peaks (the
 * shipped speech sample needs 6.5 dB), not so much that the sound gets squashed to gain a few LU.
 */
export const DEFAULT_MAX_LIMITING_DB = 8;
/** A result this close to the target has reached it (ffmpeg's meter agrees with ours to about 0.01 LU). */
export const TARGET_TOLERANCE_LU = 0.1;
/** Passes are repeated until the output is this close to the target. */
export const AIM_LU = 0.05;
/** Aim this far under the ceiling: room for rounding and dither. */
const CEILING_MARGIN_DB = 0.05;
/** Enough for the gain to converge (usually 2 or 3 passes) and for a ceiling correction on top. */
const MAX_PASSES = 8;
/** The loudness gained per dB of gain is never taken as less than this (a flat stretch must not send the gain off). */
const MIN_SLOPE = 0.05;

export function onTarget(lufs: number, targetLufs: number): boolean {
  return Math.abs(lufs - targetLufs) <= TARGET_TOLERANCE_LU;
}

export async function normalizeWavFile(
  inputPath: string,
  outputPath: string,
  options: NormalizeOptions,
): Promise<NormalizeReport> {
  const { targetLufs, ceilingDbtp } = options;
  const maxLimitingDb = options.maxLimitingDb ?? DEFAULT_MAX_LIMITING_DB;
  // The share done: the measurement a seventh, each pass of gain and limiting two more (most take one or two).
  const report = (from: number, to: number) => (done: number) =>
    options.onProgress?.(Math.min(0.95, (from + (to - from) * done) / 7));
  const input = options.input ?? (await measureWavFile(inputPath, undefined, report(0, 1)));
  options.onProgress?.(1 / 7);
  if (!Number.isFinite(input.integratedLufs)) {
    await copyFile(inputPath, outputPath);
    return {
      input,
      output: input,
      gainDb: 0,
      limiterReductionDb: 0,
      passes: 0,
      lufsPerDb: 1,
      targetReached: false,
      unchangedBecause: 'the input is silent or below the -70 LUFS gate: returned unchanged, never amplified',
    };
  }
  const temp = `${outputPath}.${process.pid}.part`;
  const knownPeaks = options.knownPeaks ?? new EnvelopeBounds();
  try {
    let ceilingDb = ceilingDbtp - CEILING_MARGIN_DB;
    // The input's highest peak as the limiter sees it (its file edges can read a little higher than the meter's).
    let inputPeakDb = input.truePeakDbtp;
    // The most gain the limiter can follow within its bound on reduction.
    const gainLimit = () => ceilingDb + maxLimitingDb - inputPeakDb;
    let gainDb = Math.min(options.firstGainDb ?? targetLufs - input.integratedLufs, gainLimit());
    let previous: { gainDb: number; lufs: number } | undefined;
    let slope = 1;
    let pass: PassResult;
    let output: LoudnessMeasurement;
    let passes = 0;
    for (;;) {
      passes++;
      pass = await gainAndLimit(
        inputPath,
        temp,
        gainDb,
        ceilingDb,
        options.outputFormat,
        knownPeaks,
        report(2 * passes - 1, 2 * passes + 1),
        options.lookaheadMs,
      );
      options.onProgress?.(Math.min(0.95, (1 + 2 * passes) / 7));
      const lufs = pass.loudness.integratedLufs;
      const reductionDb = -20 * Math.log10(pass.minGain);
      if (reductionDb > 0) inputPeakDb = Math.max(inputPeakDb, ceilingDb + reductionDb - gainDb);
      if (passes < MAX_PASSES && gainDb > gainLimit() + 1e-9) {
        gainDb = gainLimit();
        previous = undefined;
        continue;
      }
      const error = targetLufs - lufs;
      // Limiting makes the loudness grow slower than the gain: the slope of the last two passes says how much.
      const measured = previous !== undefined && gainDb !== previous.gainDb;
      if (previous && measured)
        slope = Math.min(1, Math.max(MIN_SLOPE, (lufs - previous.lufs) / (gainDb - previous.gainDb)));
      const kept = passes >= MAX_PASSES || Math.abs(error) <= AIM_LU || (error > 0 && gainDb >= gainLimit() - 1e-9); // the bound on limiting stops it here
      if (!kept) {
        previous = { gainDb, lufs };
        gainDb = Math.min(gainDb + error / (measured ? slope : 1), gainLimit());
        continue;
      }
      if (options.measureOutputPeaks === false) {
        output = pass.loudness;
        break;
      }
      // The gain is kept: the file as written, peaks included.
      output = await measureWavFile(temp);
      const peakDb = output.truePeakDbtp;
      if (peakDb <= ceilingDbtp) break;
      if (passes >= MAX_PASSES)
        throw new Error(
          `the limiter could not keep the true peak under ${ceilingDbtp} dBTP (${peakDb.toFixed(2)} after ${passes} passes)`,
        );
      // Rounding or dither put a peak over: the same gain again, under a lower ceiling.
      ceilingDb -= peakDb - ceilingDbtp + CEILING_MARGIN_DB;
      gainDb = Math.min(gainDb, gainLimit());
      previous = undefined;
    }
    await rename(temp, outputPath);
    return {
      input,
      output,
      gainDb,
      limiterReductionDb: -20 * Math.log10(pass.minGain),
      passes,
      lufsPerDb: slope,
      targetReached: onTarget(output.integratedLufs, targetLufs),
    };
  } finally {
    await rm(temp, { force: true });
  }
}

interface PassResult {
  /** The output's loudness (its peaks are not measured in a pass). */
  loudness: LoudnessMeasurement;
  minGain: number;
}

/** One pass of gain and limiting, written to `outputPath`, its loudness measured as written. */
async function gainAndLimit(
  inputPath: string,
  outputPath: string,
  gainDb: number,
  ceilingDb: number,
  outputFormat: NormalizeOptions['outputFormat'],
  knownPeaks: EnvelopeBounds,
  onProgress: (share: number) => void,
  lookaheadMs?: number,
): Promise<PassResult> {
  const source = await openWav(inputPath);
  let writer: WavWriter | undefined;
  try {
    const { layout } = source;
    const bitsPerSample = outputFormat?.bitsPerSample ?? layout.bitsPerSample;
    const format: WavFormat = { ...layout, ...outputFormat, blockAlign: layout.channels * (bitsPerSample / 8) };
    writer = await WavWriter.create(outputPath, format);
    const limiter = new TruePeakLimiter({
      sampleRate: layout.sampleRate,
      channels: layout.channels,
      gainDb,
      ceilingDb,
      knownPeaks,
      ...(lookaheadMs === undefined ? {} : { lookaheadMs }),
    });
    const meter = new LoudnessMeter(layout.sampleRate, layout.channels, layout.channelMask, false);
    const out = allocatePlanar(layout.channels, BLOCK_FRAMES);
    // Rounding a changed signal to 16 bits or fewer is dithered; 24 bits and float need none.
    const dither = format.encoding === 'int' && format.bitsPerSample <= 16;
    const emit = async (frames: number) => {
      if (frames === 0) return;
      await writer!.write(out, frames, dither);
      meter.add(out, frames); // what the file now holds, after rounding
    };
    let read = 0;
    for await (const block of source.blocks()) {
      await emit(limiter.process(block.samples, block.frames, out));
      read += block.frames;
      onProgress(Math.min(1, read / Math.max(1, layout.frames)));
    }
    await emit(limiter.flush(out));
    await writer.finish();
    writer = undefined;
    return { loudness: meter.finish(), minGain: limiter.minGain };
  } catch (err) {
    await writer?.abort();
    throw err;
  } finally {
    await source.close();
  }
}
