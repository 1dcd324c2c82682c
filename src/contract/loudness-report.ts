// The loudness report: a local-engine extension beyond the interface (docs/interface.md#loudness-report).
// The engine makes it, the client fetches it, the nodes and the sidebar show it.

/** The route of the report, beside the interface's operations (it counts as a `getMetadata` request). */
export const LOUDNESS_REPORT_PATH = (uid: string) => `/v2/medias/${encodeURIComponent(uid)}/loudness`;

/** The route's answers carry this header, so a client can tell them from a service that has no such route. */
export const LOUDNESS_REPORT_HEADER = 'x-loudness-report';

/**
 * What the header says on each answer of the route, and the status it comes with: the report, the media
 * not finished yet, no report made for this media, no such media.
 */
export const LOUDNESS_REPORT_ANSWERS = { ready: 200, pending: 412, none: 404, 'unknown-media': 404 } as const;
export type LoudnessReportAnswer = keyof typeof LOUDNESS_REPORT_ANSWERS;

/**
 * What the header says on every other answer of the route: the request was refused or failed before a
 * report was looked up (401, 405, 422, 429, 503...); the status and the detail say why.
 */
export const LOUDNESS_REPORT_REFUSED = 'refused';

export interface LoudnessTrack {
  /** LUFS; null for silence (no block over the -70 LUFS gate). */
  integrated_lufs: number | null;
  /** dBTP; null for digital silence. */
  true_peak_dbtp: number | null;
  loudness_range_lu: number | null;
  duration_s: number;
  /** One value per second: short-term loudness (3 s window, BS.1770 / EBU Tech 3341) ending at second i+1; null when below -70 LUFS/silent. */
  short_term_lufs: (number | null)[];
  /** One value per second: the highest true peak within that second (dBTP); null for digital silence. */
  true_peak_per_second_dbtp: (number | null)[];
}

export interface LoudnessReport {
  uid: string;
  interval_s: 1;
  /** The media's loudness_target. */
  target_lufs: number;
  /** The media's true_peak ceiling. */
  true_peak_limit_dbtp: number;
  /** The user's file as it came (before enhancement). */
  input: LoudnessTrack;
  /** The delivered file (after encoding, as measured on it). */
  output: LoudnessTrack;
}
