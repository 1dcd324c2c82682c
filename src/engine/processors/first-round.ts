// The first normalization of a job's processed audio for an encoded output: to the target under the
// ceiling into a float WAV, made once and shared by every output encoded from it, with the limiter's
// look-ahead the output's encoder asks for (a lossy coder's needs a longer one than a lossless file).
import { EnvelopeBounds } from '../../audio/envelope-bounds';
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import {
  DEFAULT_MAX_LIMITING_DB,
  normalizeWavFile,
  type NormalizeOptions,
  type NormalizeReport,
} from '../../audio/normalize';
import { isLossless } from '../../audio/output-encoding';
import { DEFAULT_LOOKAHEAD_MS } from '../../audio/true-peak-limiter';
import type { WorkFile } from './work-files';

export const FLOAT_WAV = { bitsPerSample: 32, encoding: 'float' } as const;

/**
 * The limiter's look-ahead for audio bound for a lossy encoder (ms), twice its default. A gain ramp of 5 ms
 * into a drum hit lies inside one AAC frame (1024 samples, 23 ms at 44.1 kHz) and the coder's error spikes
 * there: music through AAC at 128 kb/s overshot the limiter by 2.2 dB at most with 5 ms, 0.8 with 10 ms
 * (MP3 0.44 and 0.17), for about 0.25 dB more limiting at the same ceiling.
 */
const LOSSY_LOOKAHEAD_MS = 10;
/**
 * The look-ahead for audio encoded with `encoder` (ffmpeg's `-c:a <codec> ...` arguments): a lossless file
 * (FLAC, ALAC, PCM) keeps every sample, so it gets the limiter's own, as a WAV output does.
 */
export function lookaheadMsFor(encoder: string[]): number {
  const at = encoder.indexOf('-c:a');
  return at >= 0 && isLossless(encoder[at + 1] ?? '') ? DEFAULT_LOOKAHEAD_MS : LOSSY_LOOKAHEAD_MS;
}

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
  /** The limiter's look-ahead in this round (ms). */
  lookaheadMs: number;
}

/**
 * The first round into a float WAV among the work files (`processed.wav`), its true peak not measured
 * (each encoded file's is, and decides). `knownPeaks`: what earlier rounds over the same source learnt.
 */
export async function normalizeFirst(
  normalized: { path: string; measured?: LoudnessMeasurement },
  work: WorkFile,
  target: LoudnessTarget,
  lookaheadMs: number,
  onProgress: (share: number) => void,
  knownPeaks: EnvelopeBounds = new EnvelopeBounds(),
): Promise<FirstRound> {
  const report = await normalizeWavFile(normalized.path, work('processed.wav'), {
    ...target,
    maxLimitingDb: target.maxLimitingDb ?? DEFAULT_MAX_LIMITING_DB,
    input: normalized.measured,
    knownPeaks,
    onProgress,
    outputFormat: FLOAT_WAV,
    measureOutputPeaks: false,
    lookaheadMs,
  });
  return { source: normalized.path, path: work('processed.wav'), report, knownPeaks, lookaheadMs };
}
