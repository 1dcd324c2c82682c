// The record side of the engine's media: what each media is and where its work stands, over its files
// (MediaFiles). One process keeps them on disk beside the files (disk-records.ts, meta.json per media);
// instances sharing the work keep them in Redis (cluster/redis-records.ts). Routes, jobs and retention
// speak to this interface only. A media starts in three steps, its uid born once: `newUid()`, then
// `files.receive(uid)` for an upload, then `create(uid, fields)`.
import type { MediaState } from '../../contract/endpoints';
import type { MediaProgress } from '../../contract/media-progress';
import type { MediaRecord, NewMedia } from './media-record';

export interface MediaRecords {
  /** A new media's uid (media-uid.ts): the one its files and its record take. */
  newUid(): string;
  get(uid: string): Promise<MediaRecord | undefined>;
  all(): Promise<MediaRecord[]>;
  /**
   * Creates media `uid` PENDING, the place of its files readied (an upload kept there already is its
   * input); kept before anyone is told of it.
   */
  create(uid: string, fields: NewMedia): Promise<MediaRecord>;
  /**
   * Applies `changes` to `record` and keeps them. Shared by instances, a media that has ended (COMPLETED,
   * FAILED) never changes again: such an update rejects with MediaEndedError (a job that ran twice on two
   * instances leaves one result).
   */
  update(record: MediaRecord, changes: Partial<Omit<MediaRecord, 'uid'>>): Promise<void>;
  /**
   * How far a PROCESSING media is; never fails (progress is a hint). Shown in its metadata, `updated_at`
   * untouched; a held status request is answered when the share done moved on by PROGRESS_STEP.
   */
  setProgress(record: MediaRecord, progress: MediaProgress | undefined): void;
  /** Resolves once the media's state is other than `state`, its progress moved on, or `signal` aborts. */
  stateChange(uid: string, state: MediaState, signal: AbortSignal): Promise<void>;
  /** Forgets a media and removes its files; true when this call removed it (false: already gone). */
  remove(uid: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The media had ended already: the update was not applied. */
export class MediaEndedError extends Error {
  constructor(uid: string) {
    super(`media ${uid} has ended already; the update was not applied`);
  }
}
