// Checks each output the flow recorded against its input: the original (PRE) download has the input's
// exact bytes; the enhanced file is a complete WAV (every chunk whole, nothing cut off) with the input's
// rate, channels and frame count; and on a sample, ffmpeg measures it at the loudness target.
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { ffmpegLoudness } from '../test/fixtures/ffmpeg';
import type { SoakInput } from './soak-media';
import type { OutputRecord } from './soak-records';

export const LOUDNESS_TARGET = -16;
export const TRUE_PEAK_LIMIT = -1;
/** ffmpeg and the engine measure with different filters and oversampling; a short file gates differently too. */
export const LOUDNESS_TOLERANCE_LU = 1;
/** For ffmpeg's true peak: its oversampling filter is not the engine's. */
export const TRUE_PEAK_TOLERANCE_DB = 0.5;
/** For the engine's own figures, which its limiter aims at. */
export const ENGINE_TRUE_PEAK_TOLERANCE_DB = 0.1;

export interface WavShape {
  sampleRate: number;
  channels: number;
  frames: number;
}

/** Reads a WAV's chunks; throws what is wrong when it is not one whole WAV file. */
export function wavShape(bytes: Buffer): WavShape {
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE')
    throw new Error('not a RIFF/WAVE file');
  const riffEnd = 8 + bytes.readUInt32LE(4);
  if (riffEnd !== bytes.length && riffEnd + 1 !== bytes.length)
    throw new Error(`the RIFF header says ${riffEnd} bytes, the file has ${bytes.length}`);
  let fmt: { channels: number; sampleRate: number; blockAlign: number } | undefined;
  let dataBytes: number | undefined;
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = bytes.toString('latin1', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (at + 8 + size > bytes.length) throw new Error(`chunk "${id}" runs past the end of the file`);
    if (id === 'fmt ')
      fmt = {
        channels: bytes.readUInt16LE(at + 10),
        sampleRate: bytes.readUInt32LE(at + 12),
        blockAlign: bytes.readUInt16LE(at + 20),
      };
    if (id === 'data') dataBytes = size;
    at += 8 + size + (size % 2);
  }
  if (!fmt || dataBytes === undefined) throw new Error('no fmt or data chunk');
  if (dataBytes % fmt.blockAlign !== 0)
    throw new Error(`${dataBytes} data bytes is not a whole number of ${fmt.blockAlign}-byte frames`);
  return { sampleRate: fmt.sampleRate, channels: fmt.channels, frames: dataBytes / fmt.blockAlign };
}

export interface OutputCheck {
  input: string;
  problems: string[];
}

export async function checkOutput(record: OutputRecord, input: SoakInput): Promise<OutputCheck> {
  const problems: string[] = [];
  try {
    const original = await fsp.readFile(record.original);
    if (createHash('sha256').update(original).digest('hex') !== input.sha256)
      problems.push(`the original ${record.original} differs from the input`);
  } catch (err) {
    problems.push(`the original: ${(err as Error).message}`);
  }
  try {
    const shape = wavShape(await fsp.readFile(record.output));
    const expected = { sampleRate: input.sampleRate, channels: input.channels, frames: input.frames };
    if (JSON.stringify(shape) !== JSON.stringify(expected))
      problems.push(`the enhanced file is ${JSON.stringify(shape)}, the input ${JSON.stringify(expected)}`);
  } catch (err) {
    problems.push(`the enhanced file: ${(err as Error).message}`);
  }
  return { input: input.name, problems };
}

export type LoudnessVerdict =
  'on target' | 'below target, held at the true-peak ceiling' | 'off target' | 'true peak above the ceiling';

/**
 * Where an output stands against the target: on it (within the tolerance), below it because the limiter
 * held the true-peak ceiling (the ceiling wins over the target, by design), or neither.
 */
export function loudnessVerdict(
  integratedLufs: number,
  truePeakDbtp: number,
  limiterReductionDb: number,
  peakTolerance = TRUE_PEAK_TOLERANCE_DB,
): LoudnessVerdict {
  if (truePeakDbtp > TRUE_PEAK_LIMIT + peakTolerance) return 'true peak above the ceiling';
  if (Math.abs(integratedLufs - LOUDNESS_TARGET) <= LOUDNESS_TOLERANCE_LU) return 'on target';
  if (integratedLufs < LOUDNESS_TARGET && limiterReductionDb > 0 && truePeakDbtp >= TRUE_PEAK_LIMIT - 0.5)
    return 'below target, held at the true-peak ceiling';
  return 'off target';
}

export interface LoudnessCheck {
  input: string;
  ffmpeg: { integratedLufs: number; truePeakDbtp: number };
  /** What the engine says it measured on the same file. */
  engine: { loudnessLufs: number; truePeakDbtp: number; limiterReductionDb: number };
  verdict: LoudnessVerdict;
}

/** ffmpeg's `ebur128=peak=true` on one enhanced file, beside the engine's own figures for it. */
export async function checkLoudness(record: OutputRecord, engine: LoudnessCheck['engine']): Promise<LoudnessCheck> {
  const measured = await ffmpegLoudness(record.output);
  return {
    input: record.input,
    ffmpeg: { integratedLufs: measured.integratedLufs, truePeakDbtp: measured.truePeakDbtp },
    engine,
    verdict: loudnessVerdict(measured.integratedLufs, measured.truePeakDbtp, engine.limiterReductionDb),
  };
}
