// An output's own rounds through its encoder, once a trial showed the first round misses: the source
// normalized again under the ceiling less room for the encoder's overshoot, aimed off the target by the
// loudness the encoder takes off, encoded whole and measured; a second guess of the room when that encode
// shows the first was off, the better of the two kept.
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import {
  normalizeWavFile,
  TARGET_TOLERANCE_LU,
  type NormalizeOptions,
  type NormalizeReport,
} from '../../audio/normalize';
import { encoderRoomDb, makeUpLimitingDb, secondGuessRoomDb } from './encoder-room';
import type { EncoderTrial, TrialMiss } from './encoder-trial';
import { FLOAT_WAV, type FirstRound, type LoudnessTarget } from './first-round';
import type { OutputEncoder } from './output-encoder';
import type { WorkFile } from './work-files';

/** A normalization as delivered through a lossy encoder. */
export interface EncodedReport extends NormalizeReport {
  /** How far under the ceiling the limiter was set for the encoder's overshoot (dB), beyond the bound on limiting. */
  encoderRoomDb?: number;
  /** How much the audio was turned down because the encoder still overshot with that room (dB). */
  turnedDownDb?: number;
  /** ffmpeg's AAC encoder used its fast coder: its default one kept writing spikes over the ceiling. */
  fastCoder?: boolean;
}

/** What one output's encode works with: its encoder, the round it starts from, its target and its work files. */
export interface EncodeRun {
  encoder: OutputEncoder;
  first: FirstRound;
  target: LoudnessTarget;
  /** The bound on limiting, the engine's when the target names none (dB). */
  maxLimitingDb: number;
  /** The limiter's look-ahead for this output's encoder (ms). */
  lookaheadMs: number;
  work: WorkFile;
  onProgress: (share: number) => void;
}

/** One round of an output's own normalization through its encoder. */
export interface EncoderRound {
  /** How far under the ceiling the limiter was set (dB). */
  roomDb: number;
  report: NormalizeReport;
  /** What the encoded file holds, decoded again. */
  delivered: LoudnessMeasurement;
}

/** An encoded file ready to deliver: the normalization it holds, what it measures, and what the report adds. */
export interface Delivery {
  report: NormalizeReport;
  delivered: LoudnessMeasurement;
  extra?: Partial<EncodedReport>;
}

/** The work file each round of this output's own writes its normalized audio to. */
export const OWN_ROUND_WAV = 'normalized.wav';

/** `onProgress` of the share from `start` to `done`, told 0 to 1. */
export function progressSpan(onProgress: (share: number) => void, start: number, done: number) {
  return (share: number) => onProgress(start + (done - start) * share);
}

/**
 * Normalizes `from` with `options` into OWN_ROUND_WAV, its progress told as the share `span` of the work.
 * Its true peak is not measured: the encoded file's is, and decides.
 */
export function normalizeForEncoder(
  run: EncodeRun,
  from: string,
  options: NormalizeOptions,
  [start, share]: [number, number],
): Promise<NormalizeReport> {
  return normalizeWavFile(from, run.work(OWN_ROUND_WAV), {
    ...options,
    onProgress: (done) => run.onProgress(start + share * done),
    outputFormat: FLOAT_WAV,
    measureOutputPeaks: false,
    lookaheadMs: run.lookaheadMs,
  });
}

/**
 * The output's own rounds after `trial` missed by `miss`: a room guessed from the trial, and a second
 * guess when that round shows it was off. The round kept is the one of the last encode (the work file
 * `encoded`, its audio OWN_ROUND_WAV) unless the earlier one is kept back in its place.
 */
export async function ownRounds(
  run: EncodeRun,
  trial: EncoderTrial,
  { overshootDb, shiftLu }: TrialMiss,
): Promise<{ kept: EncoderRound; guessedAgain: boolean }> {
  const { first, target, encoder } = run;
  const { report: firstReport, source, knownPeaks } = first;
  // The source normalized under the ceiling less `roomDb`, encoded whole.
  const round = async (roomDb: number, [start, share]: [number, number]): Promise<EncoderRound> => {
    const report = await normalizeForEncoder(
      run,
      source,
      {
        targetLufs: target.targetLufs + shiftLu,
        ceilingDbtp: target.ceilingDbtp - roomDb,
        maxLimitingDb: run.maxLimitingDb + makeUpLimitingDb(roomDb, shiftLu, firstReport.targetReached),
        input: firstReport.input,
        // Where the first round's gain landed, moved by what the encoder took off (at the first round's slope).
        firstGainDb: firstReport.gainDb + shiftLu / firstReport.lufsPerDb,
        knownPeaks,
      },
      [start, share * 0.6],
    );
    const delivered = await encoder.encodeWhole(
      run.work(OWN_ROUND_WAV),
      report.output.seconds,
      progressSpan(run.onProgress, start + share * 0.6, start + share),
    );
    return { roomDb, report, delivered };
  };
  const overBy = (r: EncoderRound) => r.delivered.truePeakDbtp - target.ceilingDbtp;
  const shortBy = (r: EncoderRound) =>
    firstReport.targetReached ? Math.max(0, target.targetLufs - r.delivered.integratedLufs - TARGET_TOLERANCE_LU) : 0;
  const better = (a: EncoderRound, b: EncoderRound) =>
    shortBy(a) - shortBy(b) || a.report.limiterReductionDb - b.report.limiterReductionDb;

  const firstRoomDb =
    overshootDb > 0 ? encoderRoomDb(target.ceilingDbtp, trial.normalizedPeakDbtp, trial.truePeakDbtp) : 0;
  const second = await round(firstRoomDb, [0.45, 0.25]);
  const againDb = secondGuessRoomDb(second.roomDb, overBy(second), encoder.steadierEncoder() !== undefined);
  if (againDb === undefined) return { kept: second, guessedAgain: false };
  await encoder.keepAside();
  const third = await round(againDb, [0.7, 0.25]);
  // Of those under the ceiling, one on target with the less limiting, else the closer to the target;
  // both over: the later (more room, and its audio is the one the last resorts start from).
  const kept = [second, third].filter((r) => overBy(r) <= 0).sort(better)[0] ?? third;
  if (kept === second) await encoder.takeBack();
  return { kept, guessedAgain: true };
}
