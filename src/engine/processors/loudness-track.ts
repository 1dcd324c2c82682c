// A meter's measurement as a track of the loudness report (src/contract/loudness-report.ts): JSON
// numbers rounded to 0.01, null where the measurement has no finite value (silence).
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import type { LoudnessTrack } from '../../contract/loudness-report';

/** BS.1770's absolute gate: quieter short-term loudness is reported as silence. */
const SILENCE_LUFS = -70;

const rounded = (value: number): number | null => (Number.isFinite(value) ? Math.round(value * 100) / 100 : null);

export function loudnessTrack(measurement: LoudnessMeasurement): LoudnessTrack {
  return {
    integrated_lufs: rounded(measurement.integratedLufs),
    true_peak_dbtp: rounded(measurement.truePeakDbtp),
    loudness_range_lu: rounded(measurement.loudnessRangeLu),
    duration_s: Math.round(measurement.seconds * 1000) / 1000,
    short_term_lufs: measurement.perSecond.shortTermLufs.map((lufs) => (lufs < SILENCE_LUFS ? null : rounded(lufs))),
    true_peak_per_second_dbtp: measurement.perSecond.truePeakDbtp.map(rounded),
  };
}
