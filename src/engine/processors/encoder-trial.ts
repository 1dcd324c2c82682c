// What an encoder does to a normalized file's loudness and peaks, learnt before the whole file is
// corrected for it: from a 20 s excerpt of its loudest stretch (a file of a minute or more, so that it is
// usually encoded whole once), or from its whole encode.
import { decodeToWav, encodeExcerpt, type AudioContainer } from '../../audio/ffmpeg';
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import { measureWavFile } from '../../audio/measure';
import { AIM_LU, type NormalizeReport } from '../../audio/normalize';
import type { LoudnessTarget } from './first-round';
import { privateFile, type WorkFile } from './work-files';

/** What an encoder did to a normalized file's loudness and peaks (from the whole file, or from an excerpt). */
export interface EncoderTrial {
  /** The loudness of the whole file as encoded (from an excerpt: the normalized file's, moved by the excerpt's shift). */
  lufs: number;
  /** The true peak as encoded (from an excerpt: with a margin for the peaks outside it). */
  truePeakDbtp: number;
  /** The true peak of the same audio before encoding. */
  normalizedPeakDbtp: number;
}

/** How far a trial missed: its true peak over the ceiling (dB), and the loudness to win back (LU). */
export interface TrialMiss {
  overshootDb: number;
  shiftLu: number;
}

/**
 * How far the encoder took `report`'s audio off the target. Only a target the normalizer reached is chased
 * through the encoder; an unreachable one stays where the bound left it.
 */
export function missOf(target: LoudnessTarget, report: NormalizeReport, trial: EncoderTrial): TrialMiss {
  return {
    overshootDb: trial.truePeakDbtp - target.ceilingDbtp,
    shiftLu: report.targetReached ? target.targetLufs - trial.lufs : 0,
  };
}

/** Nothing to correct: under the ceiling, and on the normalizer's own aim. */
export function onAim({ overshootDb, shiftLu }: TrialMiss): boolean {
  return overshootDb <= 0 && Math.abs(shiftLu) <= AIM_LU;
}

/**
 * What the whole encode of `normalized` did; the normalized file's own true peak is measured only when
 * the encoded one is over the ceiling (the room for the encoder is worked out from both).
 */
export async function wholeTrial(
  delivered: LoudnessMeasurement,
  normalized: string,
  ceilingDbtp: number,
): Promise<EncoderTrial> {
  return {
    lufs: delivered.integratedLufs,
    truePeakDbtp: delivered.truePeakDbtp,
    normalizedPeakDbtp:
      delivered.truePeakDbtp > ceilingDbtp ? (await measureWavFile(normalized)).truePeakDbtp : -Infinity,
  };
}

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
 * The encoder tried on the loudest 20 s of `normalizedPath` (dense passages are where it overshoots most):
 * the loudness it takes off and the peak it writes, measured against the same stretch before encoding.
 * Undefined for a file too short for it to save an encode.
 */
export async function excerptTrial(
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
