// Loudness normalization delivered through a lossy encoder (or into a video's soundtrack): normalize to a
// float WAV, encode, decode the encoded file again and measure what it holds, and make it again once when
// the encoder pushed the peaks over the ceiling or moved the loudness.
import { rename } from 'node:fs/promises';
import {
  decodeToWav,
  encodeAudio,
  replaceSoundtrack,
  type AudioContainer,
  type VideoContainer,
} from '../../audio/ffmpeg';
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import { measureWavFile } from '../../audio/measure';
import {
  AIM_LU,
  DEFAULT_MAX_LIMITING_DB,
  normalizeWavFile,
  onTarget,
  type NormalizeOptions,
  type NormalizeReport,
} from '../../audio/normalize';
import { ffprobePathFor, probeStreamTypes } from '../../audio/source-encoding';
import type { MediaType } from '../storage/media-type';
import { ProcessingError, type ProcessJob } from './processor';
import { shareOfTime } from './share-of-time';
import { privateFile, type WorkFile } from './work-files';

export const FLOAT_WAV = { bitsPerSample: 32, encoding: 'float' } as const;

/**
 * A lossy encoder adds its own error to the peaks. Where it stands out over a peak left under the ceiling
 * (speech at a low bitrate), its amplitude stays about the same whatever the ceiling (it follows the
 * loudness, which stays) and lands on other peaks from one encode to the next: the second encode leaves
 * ENCODER_SPREAD times the amplitude the first one added as room. Where the limiter holds many peaks at
 * the ceiling (loud music), the overshoot grows with the limiting added for it (more peaks for the
 * encoder to push over): the room is OVERSHOOT_GROWTH times the overshoot, plus OVERSHOOT_MARGIN_DB.
 */
const ENCODER_SPREAD = 1.5;
const OVERSHOOT_GROWTH = 2;
const OVERSHOOT_MARGIN_DB = 0.2;
/** The most room left for an encoder under the ceiling (dB). */
const MAX_ENCODER_ROOM_DB = 6;
/** What the last encode is turned down by beyond what was still over. */
const TURN_DOWN_MARGIN_DB = 0.2;
/**
 * Limiting allowed beyond the bound per LU to win back in the second encode: limited music and speech
 * gain about a third of an LU per dB of gain.
 */
const LIMITING_PER_LOST_LU = 3;

/**
 * Where each part of an encoding round ends, as a share of the round (from its time on a lossy output):
 * the normalization's passes, the encode, the decode of what was encoded; measuring it is the rest.
 */
const ROUND_PARTS = { normalized: 0.4, encoded: 0.8, checked: 0.9 } as const;

export type LoudnessTarget = Pick<NormalizeOptions, 'targetLufs' | 'ceilingDbtp' | 'maxLimitingDb'>;

/** A normalization as delivered through a lossy encoder. */
export interface EncodedReport extends NormalizeReport {
  /** How far under the ceiling the limiter was set for the encoder's overshoot (dB), beyond the bound on limiting. */
  encoderRoomDb?: number;
  /** How much the audio was turned down because the encoder still overshot with that room (dB). */
  turnedDownDb?: number;
}

/**
 * Normalize to float WAV, then encode (or mux into the video), measuring what the encoded file holds.
 *
 * A lossy encoder pushes true peaks over the limiter's ceiling (by more on dense music than on speech) and
 * shifts the loudness a little. The first encode measures both; when either misses, the second is made
 * once with the ceiling lowered by that overshoot and the aim moved by that shift: at most two encodes,
 * never a ceiling lowered round after round. The room left for the encoder, and the limiting that makes up
 * the loudness it took off, are not counted against the bound on limiting, so a lossy output reaches the
 * target when the lossless path does (not only when it does with room to spare). Should the
 * second encode still overshoot (the encoder's overshoot grew with the extra limiting), the same audio is
 * turned down by the rest and encoded a last time: under the ceiling, a little short of the target, said so.
 */
export async function encodeNormalized(
  job: ProcessJob,
  source: string,
  output: MediaType,
  encoder: string[],
  ffmpegPath: string,
  work: WorkFile,
  target: LoudnessTarget,
  onProgress: (share: number) => void,
  /** An FFMETADATA file of chapters that replace the input's (chapters.ts), when the audio moved; audio outputs only. */
  chapters?: string,
): Promise<EncodedReport> {
  const streamTypes =
    output.kind === 'video'
      ? await probeStreamTypes(ffprobePathFor(ffmpegPath), job.inputPath, job.input.ext)
      : undefined;
  const maxLimitingDb = target.maxLimitingDb ?? DEFAULT_MAX_LIMITING_DB;
  // Normalizes `from` with `options`, encodes and measures the encoded file. The first round is said to take
  // 60% of the work and a second one 35% (many files need only the first), the rare last one the rest;
  // within a round, the encode tells its own progress as ffmpeg writes (a long file's encode is most of the
  // round, and would otherwise stand still).
  const round = async (from: string, options: NormalizeOptions, span: [number, number]) => {
    const [start, share] = span;
    const part = (from: number, to: number) => (done: number) =>
      onProgress(start + share * (from + (to - from) * done));
    const report = await normalizeWavFile(from, work('normalized.wav'), {
      ...options,
      onProgress: part(0, ROUND_PARTS.normalized),
      outputFormat: FLOAT_WAV,
    });
    const encoding = shareOfTime(report.output.seconds, part(ROUND_PARTS.normalized, ROUND_PARTS.encoded));
    const checking = shareOfTime(report.output.seconds, part(ROUND_PARTS.encoded, ROUND_PARTS.checked));
    await privateFile(work('encoded'));
    if (output.kind === 'video')
      await replaceSoundtrack(
        ffmpegPath,
        job.inputPath,
        work('normalized.wav'),
        work('encoded'),
        output.ext as VideoContainer,
        encoder,
        streamTypes,
        encoding,
      );
    else
      await encodeAudio(
        ffmpegPath,
        work('normalized.wav'),
        work('encoded'),
        output.ext as AudioContainer,
        encoder,
        { path: job.inputPath, format: job.input.ext, ...(chapters ? { chapters } : {}) },
        encoding,
      );
    // Report what the encoded file holds, measured after decoding it again.
    await privateFile(work('check.wav'));
    await decodeToWav(ffmpegPath, work('encoded'), output.ext, work('check.wav'), {}, undefined, checking);
    const delivered: LoudnessMeasurement = await measureWavFile(
      work('check.wav'),
      undefined,
      part(ROUND_PARTS.checked, 1),
    );
    onProgress(start + share);
    return { report, delivered };
  };
  const deliver = async (
    report: NormalizeReport,
    delivered: LoudnessMeasurement,
    extra: Partial<EncodedReport> = {},
  ): Promise<EncodedReport> => {
    await rename(work('encoded'), job.outputPath); // into place only when complete
    return {
      ...report,
      output: delivered,
      targetReached: report.targetReached && onTarget(delivered.integratedLufs, target.targetLufs),
      ...extra,
    };
  };

  const first = await round(source, { ...target, maxLimitingDb }, [0, 0.6]);
  const overshootDb = first.delivered.truePeakDbtp - target.ceilingDbtp;
  // Only a target the normalizer reached is chased through the encoder; an unreachable one stays where the bound left it.
  const shiftLu = first.report.targetReached ? target.targetLufs - first.delivered.integratedLufs : 0;
  if (first.report.unchangedBecause !== undefined || (overshootDb <= 0 && Math.abs(shiftLu) <= AIM_LU))
    return deliver(first.report, first.delivered);

  const roomDb = overshootDb > 0 ? encoderRoomDb(target.ceilingDbtp, first.report.output, first.delivered) : 0;
  // What only makes up for the encoder is not counted against the bound: for a target the normalizer reached,
  // the limiting that wins back what the lower ceiling (at most its own dB) and the encoder took off the
  // loudness; for one it did not, the lower ceiling alone (the gain stays where the bound left it).
  const makeUpDb = first.report.targetReached ? LIMITING_PER_LOST_LU * (roomDb + Math.max(0, shiftLu)) : roomDb;
  const second = await round(
    source,
    {
      targetLufs: target.targetLufs + shiftLu,
      ceilingDbtp: target.ceilingDbtp - roomDb,
      maxLimitingDb: maxLimitingDb + makeUpDb,
    },
    [0.6, 0.35],
  );
  const restDb = second.delivered.truePeakDbtp - target.ceilingDbtp;
  if (restDb <= 0) return deliver(second.report, second.delivered, roomDb > 0 ? { encoderRoomDb: roomDb } : {});

  // The last resort: the second round's audio turned down by what is still over (gain only, no more limiting).
  const downDb = restDb + TURN_DOWN_MARGIN_DB;
  await rename(work('normalized.wav'), work('limited.wav'));
  const last = await round(
    work('limited.wav'),
    {
      targetLufs: second.report.output.integratedLufs - downDb,
      // A little above the turned-down peaks: the limiter has nothing left to do.
      ceilingDbtp: second.report.output.truePeakDbtp - downDb + 0.1,
      maxLimitingDb: 0,
    },
    [0.95, 0.05],
  );
  if (last.delivered.truePeakDbtp > target.ceilingDbtp)
    throw new ProcessingError(
      'PROCESSING_FAILED',
      `the ${output.ext.toUpperCase()} encoder kept the true peak over the ${target.ceilingDbtp} dBTP limit (${last.delivered.truePeakDbtp.toFixed(2)} dBTP after 3 encodes: ${roomDb.toFixed(2)} dB of room under the ceiling, then ${downDb.toFixed(2)} dB quieter)`,
    );
  const report = { ...second.report, gainDb: second.report.gainDb - downDb };
  return deliver(report, last.delivered, {
    encoderRoomDb: roomDb,
    turnedDownDb: downDb,
    targetReached: onTarget(last.delivered.integratedLufs, target.targetLufs),
  });
}

/** How far under the ceiling to set the limiter (dB) so that the encoder's overshoot keeps under it (ENCODER_SPREAD). */
function encoderRoomDb(ceilingDbtp: number, normalized: LoudnessMeasurement, delivered: LoudnessMeasurement): number {
  const amplitude = (db: number) => 10 ** (db / 20);
  const overshootDb = delivered.truePeakDbtp - ceilingDbtp;
  const added = Math.max(0, amplitude(delivered.truePeakDbtp) - amplitude(normalized.truePeakDbtp));
  const left = amplitude(ceilingDbtp) - ENCODER_SPREAD * added;
  const standingOutDb = left > 0 ? ceilingDbtp - 20 * Math.log10(left) : Infinity;
  const growingDb = OVERSHOOT_GROWTH * overshootDb + OVERSHOOT_MARGIN_DB;
  return Math.min(MAX_ENCODER_ROOM_DB, Math.max(standingOutDb, growingDb));
}
