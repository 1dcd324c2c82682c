// Loudness normalization delivered through an encoder (or into a video's soundtrack): normalize to a
// float WAV, learn what the encoder does to it (encoder-trial.ts), normalize again when the encoder pushed
// the peaks over the ceiling or moved the loudness (encoder-rounds.ts, encoder-room.ts), with the last
// resorts after that (encoder-retry.ts); each encode decoded again and measured (output-encoder.ts).
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import { DEFAULT_MAX_LIMITING_DB, onTarget } from '../../audio/normalize';
import type { AudioContainer } from '../../audio/ffmpeg';
import { DEFAULT_LOOKAHEAD_MS } from '../../audio/true-peak-limiter';
import type { MediaType } from '../storage/media-type';
import { lastResorts } from './encoder-retry';
import { ownRounds, progressSpan, type Delivery, type EncodedReport, type EncodeRun } from './encoder-rounds';
import { excerptTrial, missOf, onAim, wholeTrial, type EncoderTrial } from './encoder-trial';
import { lookaheadMsFor, normalizeFirst, type FirstRound, type LoudnessTarget } from './first-round';
import { OutputEncoder } from './output-encoder';
import type { ProcessJob } from './processor';
import type { WorkFile } from './work-files';

/**
 * Normalize to float WAV (or take the first round made already), then encode (or mux into the video) into
 * `destination`, measuring what the encoded file holds. `work` is this output's own work files: the
 * first round is only read, so several outputs can start from it.
 *
 * A lossy encoder pushes true peaks over the limiter's ceiling (by more on dense music than on speech) and
 * shifts the loudness a little (an MP3's low-pass takes 0.3-0.5 LU off speech). The first normalization
 * learns both from the encoder; when either misses, a second is made with the ceiling lowered for that
 * overshoot and the aim moved by that shift, and at most one more from what the second encode shows, the
 * better kept. A file of a minute or more learns them from a 20 s excerpt of its loudest stretch, so the
 * whole file is usually encoded once; a shorter one (or a video) from its whole encode, then encoded again
 * when it missed. The room left for the encoder, and the limiting that makes up the loudness it took off,
 * are not counted against the bound on limiting, so a lossy output reaches the target when the lossless
 * path does (not only when it does with room to spare). The limiter looks ahead further for a lossy
 * encoder than for a lossless one (first-round.ts): a lossless output never starts from a round made for a
 * lossy one. Should the encodes still overshoot, the last resorts follow (encoder-retry.ts).
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
  const outputEncoder = await OutputEncoder.open(job, output, encoder, ffmpegPath, work, chapters);
  const maxLimitingDb = target.maxLimitingDb ?? DEFAULT_MAX_LIMITING_DB;
  const lookaheadMs = lookaheadMsFor(encoder);
  const deliver = async ({ report, delivered, extra = {} }: Delivery): Promise<EncodedReport> => {
    await outputEncoder.deliverTo(destination);
    return {
      ...report,
      output: delivered,
      targetReached: report.targetReached && onTarget(delivered.integratedLufs, target.targetLufs),
      ...extra,
    };
  };

  // The rounds from the same audio share its measurement and what the limiter learnt of its peaks.
  const first = await firstRoundFor(normalized, work, { ...target, maxLimitingDb }, lookaheadMs, (done) =>
    onProgress(0.4 * done),
  );
  const run: EncodeRun = { encoder: outputEncoder, first, target, maxLimitingDb, lookaheadMs, work, onProgress };
  const { report } = first;
  const encodeFirst = (start: number, done: number) =>
    outputEncoder.encodeWhole(first.path, report.output.seconds, progressSpan(onProgress, start, done));
  if (report.unchangedBecause !== undefined) return deliver({ report, delivered: await encodeFirst(0.4, 1) });
  const excerpt =
    output.kind === 'audio'
      ? await excerptTrial(first.path, report.output, output.ext as AudioContainer, encoder, ffmpegPath, work)
      : undefined;
  onProgress(0.45);
  let trial: EncoderTrial;
  if (excerpt && !onAim(missOf(target, report, excerpt))) trial = excerpt;
  else {
    // The excerpt (or a file too short for one) found nothing to correct: the whole file is encoded, and checked.
    const delivered = await encodeFirst(0.45, 0.9);
    trial = await wholeTrial(delivered, first.path, target.ceilingDbtp);
    if (onAim(missOf(target, report, trial))) return deliver({ report, delivered });
  }

  const { kept, guessedAgain } = await ownRounds(run, trial, missOf(target, report, trial));
  if (kept.delivered.truePeakDbtp <= target.ceilingDbtp)
    return deliver({
      report: kept.report,
      delivered: kept.delivered,
      extra: kept.roomDb > 0 ? { encoderRoomDb: kept.roomDb } : {},
    });
  const whole = (excerpt ? 1 : 2) + (guessedAgain ? 1 : 0);
  return deliver(await lastResorts(run, kept, { whole, excerpt: excerpt !== undefined }));
}

/**
 * The round this output starts from: the one given, but for a lossless output given one limited with a
 * lossy encoder's look-ahead (beside a lossy output), which makes its own first round from the same source.
 */
async function firstRoundFor(
  normalized: { path: string; measured?: LoudnessMeasurement } | FirstRound,
  work: WorkFile,
  target: LoudnessTarget,
  lookaheadMs: number,
  onProgress: (share: number) => void,
): Promise<FirstRound> {
  if (!('report' in normalized)) return normalizeFirst(normalized, work, target, lookaheadMs, onProgress);
  const lossless = lookaheadMs === DEFAULT_LOOKAHEAD_MS;
  if (!lossless || normalized.lookaheadMs === DEFAULT_LOOKAHEAD_MS) return normalized;
  const { source, report, knownPeaks } = normalized;
  return normalizeFirst({ path: source, measured: report.input }, work, target, lookaheadMs, onProgress, knownPeaks);
}
