// The engine's JSON answers, typed as the tests read them. A test checks an answer's status first, then
// reads the fields that status brings: a media (an upload, a video, a metadata request), a v1 audio
// answer, or a refusal. One type lists them all, so that a test reads a field without a cast; a field the
// answer does not have is undefined at run time, and the test's assertion says so.
import assert from 'node:assert/strict';
import type { MediaState } from '../../src/contract/endpoints';
import type { FieldIssue } from '../../src/contract/field-issue';

export interface EngineJson {
  /** A media. */
  uid: string;
  file_name: string;
  enhancement_status: MediaState;
  enhancement_params: EnhancementParams;
  inserted_at: string;
  updated_at: string;
  error?: { code: string; message: string };
  /** A v1 video record also carries these at the top level. */
  enhancement_level?: number;
  enhancement_model?: string;
  /** A v1 audio answer: the uid of the media it created. */
  generated_name: string;
  /** A refusal: its reason in words, or a 422's field issues (read them with detailText and issues). */
  detail?: string | FieldIssue[];
  [field: string]: unknown;
}

/** What a media says about itself: the settings asked for, then what processing found and did. */
export interface EnhancementParams {
  loudness_target?: number;
  true_peak?: number;
  enhancement_level?: number;
  enhancement_model?: string;
  transcode?: string;
  processing?: string;
  /** Null where a figure is not finite (the loudness of silence). */
  input_loudness_lufs: number | null;
  input_true_peak_dbtp: number | null;
  input_loudness_range_lu: number | null;
  output_loudness_lufs: number | null;
  output_true_peak_dbtp: number | null;
  output_loudness_range_lu: number | null;
  gain_db: number | null;
  limiter_reduction_db: number | null;
  target_reached?: boolean;
  note?: string;
  speech_enhancement: SpeechEnhancementReport;
  [field: string]: unknown;
}

/** `enhancement_params.speech_enhancement`: each stage null when it did not run. */
export interface SpeechEnhancementReport {
  model: string;
  chain: string;
  high_pass: { corner_hz: number } | null;
  hum_removal: {
    found: boolean;
    note?: string;
    mains_hz?: number;
    fundamental_hz?: number;
    harmonics_hz?: number[];
    prominence_db?: number;
  } | null;
  noise_reduction: {
    engine: string;
    runtime: 'native' | 'wasm';
    wet_percent?: number;
    attenuation_limit_db?: number | null;
    noise_floor_reduction_db: number | null;
  } | null;
  leveler: { note?: string; gain_min_db?: number; gain_max_db?: number; speech_percent?: number } | null;
  channel_threads: number;
}

/** A refusal's reason, where the engine says it in words (every refusal but a 422's). */
export function detailText(json: EngineJson): string {
  assert.equal(typeof json.detail, 'string', `a reason in words, not ${JSON.stringify(json.detail)}`);
  return json.detail as string;
}

/** A 422's field issues. */
export function issues(json: EngineJson): FieldIssue[] {
  assert.ok(Array.isArray(json.detail), `field issues, not ${JSON.stringify(json.detail)}`);
  return json.detail;
}
