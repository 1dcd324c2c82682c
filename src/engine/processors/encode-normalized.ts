// Loudness normalization delivered through a lossy encoder (or into a video's soundtrack): normalize to a
// float WAV, learn what the encoder does to it (from an excerpt, or from the whole encode), normalize again
// once when the encoder pushed the peaks over the ceiling or moved the loudness, encode, decode the encoded
// file again and measure what it holds.
import { rename } from 'node:fs/promises';
import { EnvelopeBounds } from '../../audio/envelope-bounds';
import {
  decodeToWav,
  encodeAudio,
  encodeExcerpt,
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
  TARGET_TOLERANCE_LU,
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
 * The limiter's look-ahead for audio bound for a lossy encoder (ms), twice its default. A gain ramp of 5 ms
 * into a drum hit lies inside one AAC frame (1024 samples, 23 ms at 44.1 kHz) and the coder's error spikes
 * there: music through AAC at 128 kb/s overshot the limiter by 2.2 dB at most with 5 ms, 0.8 with 10 ms
 * (MP3 0.44 and 0.17), for about 0.25 dB more limiting at the same ceiling.
 */
const ENCODED_LOOKAHEAD_MS = 10;

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
/**
 * The most limiting a lossy output may add beyond the bound to make up for its encoder (dB). Music through
 * ffmpeg's AAC coder showed why a bound is needed: its overshoot (1-2 dB on a lone drum hit at 128 kb/s)
 * left 6 dB of room, and 3 dB of limiting per LU to win back took a 30 s intro to 28 dB of limiting, its
 * drums flattened. 4 dB is what about 1 dB of room costs on dense music (drums: 3.5 dB of limiting at
 * -1 dBTP, 7.8 at -2) and keeps the total within 12 dB at the default bound: a target that needs more is
 * left short, under the ceiling, and said so.
 */
const MAX_ENCODER_LIMITING_DB = 4;
/** A second guess of the room is made when the encode left more than this unused under the ceiling (dB)... */
const UNUSED_ROOM_DB = 0.5;
/** ...aiming this far under the ceiling (dB): the encoder's peaks move by a few tenths from one round to the next. */
const AIM_UNDER_CEILING_DB = 0.3;
/** What the last encode is turned down by beyond what was still over. */
const TURN_DOWN_MARGIN_DB = 0.2;
/**
 * Limiting allowed beyond the bound per LU to win back in the second encode: limited music and speech
 * gain about a third of an LU per dB of gain.
 */
const LIMITING_PER_LOST_LU = 3;

export type LoudnessTarget = Pick<NormalizeOptions, 'targetLufs' | 'ceilingDbtp' | 'maxLimitingDb'>;

/**
 * The first normalization of the processed audio, to the target under the ceiling: made once per job and
 * shared by every output encoded from it (several outputs); each encoder's own corrections start from it.
 */
export interface FirstRound {
  /** The audio each round normalizes (the enhanced, trimmed WAV). */
  source: string;
  /** The first round's WAV: a float work file, or the job's WAV output. */
  path: string;
  report: NormalizeReport;
  /** What the limiter learnt of the source's peaks, for the later rounds. */
  knownPeaks: EnvelopeBounds;
}

/**
 * The first round into a float WAV among the work files (`processed.wav`), its true peak not measured
 * (each encoded file's is, and decides).
 */
export async function normalizeFirst(
  normalized: { path: string; measured?: LoudnessMeasurement },
  work: WorkFile,
  target: LoudnessTarget,
  onProgress: (share: number) => void,
): Promise<FirstRound> {
  const knownPeaks = new EnvelopeBounds();
  const report = await normalizeWavFile(normalized.path, work('processed.wav'), {
    ...target,
    maxLimitingDb: target.maxLimitingDb ?? DEFAULT_MAX_LIMITING_DB,
    input: normalized.measured,
    knownPeaks,
    onProgress,
    outputFormat: FLOAT_WAV,
    measureOutputPeaks: false,
    lookaheadMs: ENCODED_LOOKAHEAD_MS,
  });
  return { source: normalized.path, path: work('processed.wav'), report, knownPeaks };
}

/** A normalization as delivered through a lossy encoder. */
export interface EncodedReport extends NormalizeReport {
  /** How far under the ceiling the limiter was set for the encoder's overshoot (dB), beyond the bound on limiting. */
  encoderRoomDb?: number;
  /** How much the audio was turned down because the encoder still overshot with that room (dB). */
  turnedDownDb?: number;
  /** ffmpeg's AAC encoder used its fast coder: its default one kept writing spikes over the ceiling. */
  fastCoder?: boolean;
}

/**
 * Normalize to float WAV (or take the first round made already), then encode (or mux into the video) into
 * `destination`, measuring what the encoded file holds. `work` is this output's own work files: the
 * first round is only read, so several outputs can start from it.
 *
 * A lossy encoder pushes true peaks over the limiter's ceiling (by more on dense music than on speech) and
 * shifts the loudness a little (an MP3's low-pass takes 0.3-0.5 LU off speech). The first normalization
 * learns both from the encoder; when either misses, a second is made with the ceiling lowered for that
 * overshoot and the aim moved by that shift, and at most one more from what the second encode shows (more
 * than UNUSED_ROOM_DB under, or still over but for AAC: the overshoot moved with the limiting), the better kept. A file
 * of a minute or more learns them from a 20 s excerpt of its loudest stretch, so the whole file is usually
 * encoded once; a shorter one (or a video) from its whole encode, then encoded again when it missed. The
 * room left for the encoder, and up to MAX_ENCODER_LIMITING_DB of limiting that makes up the loudness it
 * took off, are not counted against the bound on limiting, so a lossy output reaches the target when the
 * lossless path does (not only when it does with room to spare). The limiter looks ahead
 * ENCODED_LOOKAHEAD_MS for an encoder. Should the encodes still overshoot, ffmpeg's AAC encoder gets its fast
 * coder for the same audio (its default one writes spikes no correction lands on); only an encoder still
 * over (its overshoot grew with the extra limiting, or the excerpt missed a peak) has the same audio turned
 * down by the rest and encoded a last time: under the ceiling, a little short of the target, said so.
 */
export async function encodeNormalized(
  job: ProcessJob,
  normalized: { path: string; measured?: LoudnessMeasurement } | FirstRound,
  output: MediaType,
  encoder: string[],
  ffmpegPath: string,
  work: WorkFile,
  target: LoudnessTarget,
  onProgress: (share: number) => void,
  /** An FFMETADATA file of chapters that replace the input's (chapters.ts), when the audio moved; audio outputs only. */
  chapters?: string,
  /** Where the encoded file goes; default the job's output. */
  destination: string = job.outputPath,
): Promise<EncodedReport> {
  const streamTypes =
    output.kind === 'video'
      ? await probeStreamTypes(ffprobePathFor(ffmpegPath), job.inputPath, job.input.ext)
      : undefined;
  const maxLimitingDb = target.maxLimitingDb ?? DEFAULT_MAX_LIMITING_DB;
  // The normalized audio the next encode reads: the first round's, until a round of this output's own.
  let current = work('normalized.wav');
  // A video's soundtrack alone (an extra output) keeps the video's tags and chapters, never its picture as a cover.
  const soundtrackAlone = job.input.kind === 'video' && output.kind === 'audio';
  // Normalizes `from` with `options` into normalized.wav, its progress told as the share `span` of the work.
  // Its true peak is not measured: the encoded file's is, and decides.
  const normalize = (from: string, options: NormalizeOptions, [start, share]: [number, number]) => {
    current = work('normalized.wav');
    return normalizeWavFile(from, current, {
      ...options,
      onProgress: (done) => onProgress(start + share * done),
      outputFormat: FLOAT_WAV,
      measureOutputPeaks: false,
      lookaheadMs: ENCODED_LOOKAHEAD_MS,
    });
  };
  const normalizedPeakDbtp = async () => (await measureWavFile(current)).truePeakDbtp;
  // Encodes normalized.wav whole and measures what the encoded file holds, decoded again; its progress told
  // from `start` to `done` as ffmpeg writes (a long file's encode is most of the work, and would otherwise stand still).
  const encodeWhole = async (
    seconds: number,
    start: number,
    done: number,
    encoderArgs: string[] = encoder,
  ): Promise<LoudnessMeasurement> => {
    const part = (from: number, to: number) => (share: number) =>
      onProgress(start + (done - start) * (from + (to - from) * share));
    const encoding = shareOfTime(seconds, part(0, ENCODE_PARTS.encoded));
    const checking = shareOfTime(seconds, part(ENCODE_PARTS.encoded, ENCODE_PARTS.checked));
    await privateFile(work('encoded'));
    if (output.kind === 'video')
      await replaceSoundtrack(
        ffmpegPath,
        job.inputPath,
        current,
        work('encoded'),
        output.ext as VideoContainer,
        encoderArgs,
        streamTypes,
        encoding,
      );
    else
      await encodeAudio(
        ffmpegPath,
        current,
        work('encoded'),
        output.ext as AudioContainer,
        encoderArgs,
        {
          path: job.inputPath,
          format: job.input.ext,
          ...(chapters ? { chapters } : {}),
          ...(soundtrackAlone ? { pictures: false } : {}),
        },
        encoding,
      );
    await privateFile(work('check.wav'));
    await decodeToWav(ffmpegPath, work('encoded'), output.ext, work('check.wav'), {}, undefined, checking);
    const delivered = await measureWavFile(work('check.wav'), undefined, part(ENCODE_PARTS.checked, 1));
    onProgress(done);
    return delivered;
  };
  // What the encoder did to normalized.wav, from the whole encode.
  const wholeTrial = async (delivered: LoudnessMeasurement): Promise<EncoderTrial> => ({
    lufs: delivered.integratedLufs,
    truePeakDbtp: delivered.truePeakDbtp,
    normalizedPeakDbtp: delivered.truePeakDbtp > target.ceilingDbtp ? await normalizedPeakDbtp() : -Infinity,
  });
  // Only a target the normalizer reached is chased through the encoder; an unreachable one stays where the bound left it.
  const missed = (report: NormalizeReport, trial: EncoderTrial) => ({
    overshootDb: trial.truePeakDbtp - target.ceilingDbtp,
    shiftLu: report.targetReached ? target.targetLufs - trial.lufs : 0,
  });
  const onAim = ({ overshootDb, shiftLu }: { overshootDb: number; shiftLu: number }) =>
    overshootDb <= 0 && Math.abs(shiftLu) <= AIM_LU;
  const deliver = async (
    report: NormalizeReport,
    delivered: LoudnessMeasurement,
    extra: Partial<EncodedReport> = {},
  ): Promise<EncodedReport> => {
    await rename(work('encoded'), destination); // into place only when complete
    return {
      ...report,
      output: delivered,
      targetReached: report.targetReached && onTarget(delivered.integratedLufs, target.targetLufs),
      ...extra,
    };
  };

  // The rounds from the same audio share its measurement and what the limiter learnt of its peaks.
  const round =
    'report' in normalized
      ? normalized
      : await normalizeFirst(normalized, work, { ...target, maxLimitingDb }, (done) => onProgress(0.4 * done));
  const { source, knownPeaks, report: first } = round;
  current = round.path;
  if (first.unchangedBecause !== undefined) return deliver(first, await encodeWhole(first.output.seconds, 0.4, 1));
  const excerpt =
    output.kind === 'audio'
      ? await excerptTrial(current, first.output, output.ext as AudioContainer, encoder, ffmpegPath, work)
      : undefined;
  onProgress(0.45);
  let trial: EncoderTrial;
  if (excerpt && !onAim(missed(first, excerpt))) trial = excerpt;
  else {
    // The excerpt (or a file too short for one) found nothing to correct: the whole file is encoded, and checked.
    const delivered = await encodeWhole(first.output.seconds, 0.45, 0.9);
    trial = await wholeTrial(delivered);
    if (onAim(missed(first, trial))) return deliver(first, delivered);
  }

  const { overshootDb, shiftLu } = missed(first, trial);
  // One round of this output's own: the source normalized under the ceiling less `roomDb`, encoded whole.
  // What only makes up for the encoder is not counted against the bound: for a target the normalizer
  // reached, the limiting that wins back what the lower ceiling and the encoder took off the loudness (at
  // most MAX_ENCODER_LIMITING_DB); for one it did not, the lower ceiling alone (the gain stays where the
  // bound left it).
  const encoderRound = async (roomDb: number, [start, share]: [number, number]): Promise<EncoderRound> => {
    const makeUpDb = first.targetReached
      ? Math.min(MAX_ENCODER_LIMITING_DB, LIMITING_PER_LOST_LU * (roomDb + Math.max(0, shiftLu)))
      : roomDb;
    const report = await normalize(
      source,
      {
        targetLufs: target.targetLufs + shiftLu,
        ceilingDbtp: target.ceilingDbtp - roomDb,
        maxLimitingDb: maxLimitingDb + makeUpDb,
        input: first.input,
        // Where the first round's gain landed, moved by what the encoder took off (at the first round's slope).
        firstGainDb: first.gainDb + shiftLu / first.lufsPerDb,
        knownPeaks,
      },
      [start, share * 0.6],
    );
    const delivered = await encodeWhole(report.output.seconds, start + share * 0.6, start + share);
    return { roomDb, report, delivered };
  };
  const overBy = (r: EncoderRound) => r.delivered.truePeakDbtp - target.ceilingDbtp;
  const shortBy = (r: EncoderRound) =>
    first.targetReached ? Math.max(0, target.targetLufs - r.delivered.integratedLufs - TARGET_TOLERANCE_LU) : 0;
  const better = (a: EncoderRound, b: EncoderRound) =>
    shortBy(a) - shortBy(b) || a.report.limiterReductionDb - b.report.limiterReductionDb;
  const firstRoomDb =
    overshootDb > 0 ? encoderRoomDb(target.ceilingDbtp, trial.normalizedPeakDbtp, trial.truePeakDbtp) : 0;
  let second = await encoderRound(firstRoomDb, [0.45, 0.25]);
  // The room was guessed from an encode at another ceiling, and the encoder's overshoot moves with the
  // limiting (on music it can shrink as well as grow): a second guess from what this encode shows, when it
  // is under the ceiling by more than UNUSED_ROOM_DB (limiting, or loudness, given up for nothing), or
  // still over it (ffmpeg's AAC encoder gets its fast coder for that instead, below).
  const steadier = steadierEncoder(encoder);
  const unused = -overBy(second);
  const thirdRound = (overBy(second) > 0 && !steadier) || (unused > UNUSED_ROOM_DB && second.roomDb > 0);
  if (thirdRound) {
    const roomDb = Math.min(MAX_ENCODER_ROOM_DB, Math.max(0, second.roomDb - unused + AIM_UNDER_CEILING_DB));
    await rename(work('encoded'), work('encoded.before'));
    const third = await encoderRound(roomDb, [0.7, 0.25]);
    // Of those under the ceiling, one on target with the less limiting, else the closer to the target;
    // both over: the later (more room, and its audio is the one the steps below start from).
    const kept = [second, third].filter((r) => overBy(r) <= 0).sort(better)[0] ?? third;
    if (kept === second) await rename(work('encoded.before'), work('encoded'));
    second = kept;
  }
  const { roomDb, report: secondReport, delivered: secondDelivered } = second;
  if (secondDelivered.truePeakDbtp <= target.ceilingDbtp)
    return deliver(secondReport, secondDelivered, roomDb > 0 ? { encoderRoomDb: roomDb } : {});

  // ffmpeg's AAC encoder (its default coder) writes lone spikes over limited peaks that come and go with a
  // fraction of a dB of gain or ceiling, so no correction lands on them (a 96 kb/s soundtrack: -1.24 dBTP
  // asked, +1.21 written). Its fast coder follows the peaks it is given: the same audio is encoded with it
  // before any loudness is given up.
  let lastEncoder = encoder;
  let overDelivered = secondDelivered;
  if (steadier) {
    const steadierDelivered = await encodeWhole(secondReport.output.seconds, 0.95, 0.97, steadier);
    if (steadierDelivered.truePeakDbtp <= target.ceilingDbtp)
      return deliver(secondReport, steadierDelivered, { encoderRoomDb: roomDb, fastCoder: true });
    lastEncoder = steadier;
    overDelivered = steadierDelivered;
  }

  // The last resort: the second round's audio turned down by what is still over (gain only, no more limiting).
  const downDb = overDelivered.truePeakDbtp - target.ceilingDbtp + TURN_DOWN_MARGIN_DB;
  const secondPeakDbtp = await normalizedPeakDbtp();
  await rename(current, work('limited.wav'));
  await normalize(
    work('limited.wav'),
    {
      targetLufs: secondReport.output.integratedLufs - downDb,
      // A little above the turned-down peaks: the limiter has nothing left to do.
      ceilingDbtp: secondPeakDbtp - downDb + 0.1,
      maxLimitingDb: 0,
    },
    [0.9, 0.05],
  );
  const lastDelivered = await encodeWhole(secondReport.output.seconds, 0.97, 1, lastEncoder);
  if (lastDelivered.truePeakDbtp <= target.ceilingDbtp) {
    const report = { ...secondReport, gainDb: secondReport.gainDb - downDb };
    return deliver(report, lastDelivered, {
      encoderRoomDb: roomDb,
      turnedDownDb: downDb,
      targetReached: onTarget(lastDelivered.integratedLufs, target.targetLufs),
      ...(steadier ? { fastCoder: true } : {}),
    });
  }
  const encodes = (excerpt ? 2 : 3) + (thirdRound ? 1 : 0) + (steadier ? 1 : 0);
  throw new ProcessingError(
    'PROCESSING_FAILED',
    `the ${output.ext.toUpperCase()} encoder kept the true peak over the ${target.ceilingDbtp} dBTP limit (${lastDelivered.truePeakDbtp.toFixed(2)} dBTP after ${excerpt ? `an excerpt and ${encodes}` : encodes} encodes: ${roomDb.toFixed(2)} dB of room under the ceiling, ${steadier ? 'then with its fast coder, ' : ''}then ${downDb.toFixed(2)} dB quieter)`,
  );
}

/**
 * ffmpeg's own AAC encoder with its fast coder (`-aac_coder fast`) in place of the default one, whose lone
 * spikes at low bitrates no gain or ceiling corrects; undefined for another encoder, or a coder chosen already.
 */
function steadierEncoder(encoder: string[]): string[] | undefined {
  const codec = encoder[encoder.indexOf('-c:a') + 1];
  if (!encoder.includes('-c:a') || codec !== 'aac' || encoder.includes('-aac_coder')) return undefined;
  return [...encoder, '-aac_coder', 'fast'];
}

/** What an encoder did to a normalized file's loudness and peaks (from the whole file, or from an excerpt). */
interface EncoderTrial {
  /** The loudness of the whole file as encoded (from an excerpt: the normalized file's, moved by the excerpt's shift). */
  lufs: number;
  /** The true peak as encoded (from an excerpt: with a margin for the peaks outside it). */
  truePeakDbtp: number;
  /** The true peak of the same audio before encoding. */
  normalizedPeakDbtp: number;
}

/** One round of an output's own normalization through its encoder. */
interface EncoderRound {
  /** How far under the ceiling the limiter was set (dB). */
  roomDb: number;
  report: NormalizeReport;
  /** What the encoded file holds, decoded again. */
  delivered: LoudnessMeasurement;
}

/** Where the encode ends and the check of the encoded file ends, within the share of the work an encode is told. */
const ENCODE_PARTS = { encoded: 0.8, checked: 0.9 } as const;

/** The excerpt's length (s), and the shortest file that is tried on one rather than on its whole encode. */
const EXCERPT_SECONDS = 20;
const MIN_SECONDS_FOR_EXCERPT = 3 * EXCERPT_SECONDS;
/** What is left out of the excerpt's measurement at each end (s): its fades, and the decoder's alignment. */
const EXCERPT_EDGE_SECONDS = 0.5;
/**
 * The excerpt's true peak is counted this much higher (dB): the whole file holds more peaks at the ceiling
 * for the encoder to push over (an AAC excerpt at -1.01 dBTP, its whole file at -0.95).
 */
const EXCERPT_PEAK_MARGIN_DB = 0.1;

/**
 * The encoder tried on the loudest 20 s of normalized.wav (dense passages are where it overshoots most):
 * the loudness it takes off and the peak it writes, measured against the same stretch before encoding.
 * Undefined for a file too short for it to save an encode.
 */
async function excerptTrial(
  normalizedPath: string,
  normalized: LoudnessMeasurement,
  container: AudioContainer,
  encoder: string[],
  ffmpegPath: string,
  work: WorkFile,
): Promise<EncoderTrial | undefined> {
  if (normalized.seconds < MIN_SECONDS_FOR_EXCERPT) return undefined;
  const fromSeconds = loudestStretch(normalized.perSecond.shortTermLufs, EXCERPT_SECONDS);
  await privateFile(work('excerpt'));
  await encodeExcerpt(ffmpegPath, normalizedPath, work('excerpt'), container, encoder, {
    fromSeconds,
    seconds: EXCERPT_SECONDS,
  });
  await privateFile(work('excerpt.wav'));
  await decodeToWav(ffmpegPath, work('excerpt'), container, work('excerpt.wav'));
  const inner = EXCERPT_SECONDS - 2 * EXCERPT_EDGE_SECONDS;
  const before = await measureWavFile(normalizedPath, {
    fromSeconds: fromSeconds + EXCERPT_EDGE_SECONDS,
    seconds: inner,
  });
  const after = await measureWavFile(work('excerpt.wav'), { fromSeconds: EXCERPT_EDGE_SECONDS, seconds: inner });
  return {
    lufs: normalized.integratedLufs + after.integratedLufs - before.integratedLufs,
    truePeakDbtp: after.truePeakDbtp + EXCERPT_PEAK_MARGIN_DB,
    normalizedPeakDbtp: before.truePeakDbtp,
  };
}

/** Where the `seconds` long stretch with the most short-term loudness energy starts (whole seconds). */
function loudestStretch(shortTermLufs: number[], seconds: number): number {
  const energy = shortTermLufs.map((lufs) => (Number.isFinite(lufs) ? 10 ** (lufs / 10) : 0));
  // shortTermLufs[i] covers the 3 s ending at second i + 1: the stretch [a, a + seconds) holds those from a + 2 on.
  let best = 0;
  let bestSum = -1;
  let sum = 0;
  for (let i = 0; i < energy.length; i++) {
    sum += energy[i];
    if (i >= seconds - 2) sum -= energy[i - (seconds - 2)] ?? 0;
    const start = i - (seconds - 1);
    if (start >= 0 && start + seconds <= energy.length && sum > bestSum) {
      best = start;
      bestSum = sum;
    }
  }
  return best;
}

/** How far under the ceiling to set the limiter (dB) so that the encoder's overshoot keeps under it (ENCODER_SPREAD). */
function encoderRoomDb(ceilingDbtp: number, normalizedPeakDbtp: number, deliveredPeakDbtp: number): number {
  const amplitude = (db: number) => 10 ** (db / 20);
  const overshootDb = deliveredPeakDbtp - ceilingDbtp;
  const added = Math.max(0, amplitude(deliveredPeakDbtp) - amplitude(normalizedPeakDbtp));
  const left = amplitude(ceilingDbtp) - ENCODER_SPREAD * added;
  const standingOutDb = left > 0 ? ceilingDbtp - 20 * Math.log10(left) : Infinity;
  const growingDb = OVERSHOOT_GROWTH * overshootDb + OVERSHOOT_MARGIN_DB;
  return Math.min(MAX_ENCODER_ROOM_DB, Math.max(standingOutDb, growingDb));
}
