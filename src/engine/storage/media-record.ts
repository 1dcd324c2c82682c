// What the engine knows of one media: its record (the interface's metadata and the engine's own part),
// how a new one starts, and the metadata answered for it.
import { stemOf } from '../../contract/attachment';
import type { EnhancementSettings } from '../../contract/fields';
import type { MediaState } from '../../contract/endpoints';
import type { MediaProgress } from '../../contract/media-progress';
import type { MediaType } from './media-type';

/** Where a media came from: the v1 JSON operation, the v1 video operation, or a v2 upload. */
export type MediaSource = 'enhance-json' | 'video' | 'upload';

export interface MediaRecord {
  uid: string;
  file_name: string;
  enhancement_status: MediaState;
  enhancement_params: Record<string, unknown>;
  inserted_at: string;
  updated_at: string;
  error?: { code: string; message: string };
  /** While PROCESSING: how far the work is (an extension field, never persisted: a restart starts the work over). */
  progress?: MediaProgress;
  /** Video records (v1) carry these at the top level too. */
  enhancement_level?: number;
  enhancement_model?: string;
  /** Engine-only: never in a response. */
  internal: {
    source: MediaSource;
    settings: Required<Pick<EnhancementSettings, 'loudness_target' | 'true_peak' | 'enhancement_model'>> &
      EnhancementSettings;
    /** v1 JSON: the URL still to fetch. */
    downloadUrl?: string;
    /** With instances sharing the work: the engine that set it PROCESSING (cluster/engine-name.ts). */
    engine?: string;
    input?: MediaType;
    output?: MediaType;
    /** The extra outputs stored (several-outputs), by name, once COMPLETED. */
    outputs?: StoredOutput[];
  };
}

/** An extra output of a media, stored as `output-<name>`. */
export interface StoredOutput {
  name: string;
  type: MediaType;
}

/** The name a processed file is downloaded under: `<stem>_enhanced.<ext>`, `<stem>_<output name>.<ext>`. */
export function processedFileName(fileName: string, ending: string, ext: string): string {
  return `${stemOf(fileName)}_${ending}.${ext}`;
}

/** What a route says of a new media; the records add its state and times. */
export type NewMedia = Omit<MediaRecord, 'uid' | 'enhancement_status' | 'inserted_at' | 'updated_at'>;

/** A new media's record: PENDING, inserted and updated at `now` (ms since the epoch, on the records' clock). */
export function newRecord(uid: string, fields: NewMedia, now: number): MediaRecord {
  const at = new Date(now).toISOString();
  return { uid, enhancement_status: 'PENDING', inserted_at: at, updated_at: at, ...fields };
}

/** When each media's progress was last set: its time left counts down from then until the next. */
const progressSetAt = new WeakMap<MediaRecord, number>();

/** The record's progress was set at `at` (ms since the epoch): now, or when another instance set it. */
export function noteProgressSetAt(record: MediaRecord, at: number): void {
  progressSetAt.set(record, at);
}

/** The metadata object of the interface: the record without what only the engine needs. */
export function publicMetadata(record: MediaRecord): Record<string, unknown> {
  const { internal: _internal, progress, ...visible } = record;
  if (!progress) return visible;
  // A stage may go a while without telling its progress: the time left runs down meanwhile. Run out with
  // the work not done, the estimate was wrong: it says nothing rather than "about 1 s" for the rest.
  const left = progress.seconds_left;
  const since = (Date.now() - (progressSetAt.get(record) ?? Date.now())) / 1000;
  const now = left === null || left - since <= 0 ? null : Math.round((left - since) * 10) / 10;
  return { ...visible, progress: { ...progress, seconds_left: now } };
}

/** Metadata JSON per record, dropped by every change (recordChanged). */
const serialized = new WeakMap<MediaRecord, Buffer>();

/** The record changed: its metadata JSON is made anew. */
export function recordChanged(record: MediaRecord): void {
  serialized.delete(record);
}

/** The metadata as JSON bytes, made once per change of the record: status reads are the hot path. */
export function metadataJson(record: MediaRecord): Buffer {
  // A processing media's time left changes as time passes: made anew for each answer.
  if (record.progress) return Buffer.from(JSON.stringify(publicMetadata(record)));
  let json = serialized.get(record);
  if (!json) {
    json = Buffer.from(JSON.stringify(publicMetadata(record)));
    serialized.set(record, json);
  }
  return json;
}
