// What a job tells about its processing in the media's `enhancement_params`: the speech enhancement chain
// (or why none ran) and the loudness before and after, the limiting and the encoder's room.
import type { TrimReport } from '../../audio/trim-pauses';
import type { EncodedReport } from './encoder-rounds';
import type { LoudnessTarget } from './first-round';

/** A loudness figure in the report, to 0.01; null where it is not a finite number (silence's -inf LUFS). */
export type Figure = number | null;

/** The loudness part of a media's `enhancement_params` (docs/interface.md). */
export interface LoudnessParams {
  processing: 'none' | 'loudness' | 'speech enhancement' | 'speech enhancement, loudness';
  input_loudness_lufs: Figure;
  input_true_peak_dbtp: Figure;
  input_loudness_range_lu: Figure;
  output_loudness_lufs: Figure;
  output_true_peak_dbtp: Figure;
  output_loudness_range_lu: Figure;
  gain_db: Figure;
  limiter_reduction_db: Figure;
  target_reached: boolean;
  /** Only for a lossy output whose encoder pushed the true peak over the limit. */
  encoder_headroom_db?: Figure;
  /** When AAC's fast coder was used to land the true peak. */
  aac_coder?: 'fast';
  /** When the file is shorter than one gating block. */
  loudness_measured_over?: string;
  /** Why nothing was changed, or why the target was out of reach. */
  note?: string;
}

export function loudnessParams(
  report: EncodedReport,
  returnedAsItCame: boolean,
  loudnessOnly: boolean,
  target: LoudnessTarget,
): LoudnessParams {
  const round = (value: number): Figure => (Number.isFinite(value) ? Math.round(value * 100) / 100 : null);
  return {
    processing: returnedAsItCame
      ? 'none'
      : loudnessOnly
        ? report.unchangedBecause
          ? 'none'
          : 'loudness'
        : report.unchangedBecause
          ? 'speech enhancement'
          : 'speech enhancement, loudness',
    input_loudness_lufs: round(report.input.integratedLufs),
    input_true_peak_dbtp: round(report.input.truePeakDbtp),
    input_loudness_range_lu: round(report.input.loudnessRangeLu),
    output_loudness_lufs: round(report.output.integratedLufs),
    output_true_peak_dbtp: round(report.output.truePeakDbtp),
    output_loudness_range_lu: round(report.output.loudnessRangeLu),
    gain_db: round(report.gainDb),
    limiter_reduction_db: round(report.limiterReductionDb),
    target_reached: report.targetReached,
    ...(report.encoderRoomDb ? { encoder_headroom_db: round(report.encoderRoomDb) } : {}),
    ...(report.fastCoder ? { aac_coder: 'fast' as const } : {}),
    ...(report.input.measuredWhole
      ? {
          loudness_measured_over: `the whole file (${report.input.seconds.toFixed(2)} s): it is shorter than one 400 ms gating block`,
        }
      : {}),
    ...(report.unchangedBecause ? { note: report.unchangedBecause } : {}),
    ...(!report.targetReached && !report.unchangedBecause ? { note: unreachedNote(report, target) } : {}),
  };
}

/** The speech enhancement report when none ran (`why`): the model asked for, and no stage. */
export function notApplied(model: string, why: string): Record<string, unknown> {
  return {
    speech_enhancement: {
      model,
      chain: '',
      high_pass: null,
      hum_removal: null,
      noise_reduction: null,
      leveler: null,
      note: `not applied: ${why}`,
    },
  };
}

function unreachedNote(report: EncodedReport, target: LoudnessTarget): string {
  const reached = report.output.integratedLufs.toFixed(1);
  if (report.turnedDownDb)
    return `${target.targetLufs} LUFS is out of reach under the ${target.ceilingDbtp} dBTP limit through this encoder: it overshot the limiter by more than the ${report.encoderRoomDb!.toFixed(2)} dB of room left for it, so the output was turned down ${report.turnedDownDb.toFixed(2)} dB: it is ${reached} LUFS`;
  // Through an encoder that needed room, the limiter may have taken more than the bound to make up for it.
  const encoder = report.encoderRoomDb
    ? ` (and what makes up for this encoder's ${report.encoderRoomDb.toFixed(2)} dB of room: ${report.limiterReductionDb.toFixed(1)} dB in all)`
    : '';
  return `${target.targetLufs} LUFS is out of reach under the ${target.ceilingDbtp} dBTP limit with at most ${target.maxLimitingDb} dB of limiting${encoder}: the output is ${reached} LUFS`;
}

/** The trim-pauses report: the limit, how many pauses were shortened and how much time was cut (seconds). */
export function pausesTrimmed(trimmed: TrimReport & { limitS: number }): Record<string, unknown> {
  const round = (value: number) => Math.round(value * 1000) / 1000;
  return {
    longer_than_s: trimmed.limitS,
    count: trimmed.pausesTrimmed,
    cut_s: round(trimmed.removedS),
    cuts: trimmed.cuts.map((cut) => ({ start_s: round(cut.start), end_s: round(cut.end) })),
  };
}
