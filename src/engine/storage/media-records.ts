// The record side of the engine's media: what each media is and where its work stands. One process
// keeps them on disk beside the files (store.ts, meta.json per media); instances sharing the work keep
// them in Redis (cluster/redis-records.ts). Routes, jobs and retention speak to this interface only.
import type { MediaState } from '../../contract/endpoints';
import type { MediaProgress } from '../../contract/media-progress';
import type { IncomingFile } from './media-files';
import type { MediaRecord, MediaStore } from './store';

export type NewMedia = Omit<MediaRecord, 'uid' | 'enhancement_status' | 'inserted_at' | 'updated_at'>;

export interface MediaRecords {
  get(uid: string): Promise<MediaRecord | undefined>;
  all(): Promise<MediaRecord[]>;
  /** Creates a media PENDING (its stored upload, if any, made its input); kept before anyone is told of it. */
  create(fields: NewMedia, uploaded?: IncomingFile): Promise<MediaRecord>;
  /**
   * Applies `changes` to `record` and keeps them. Shared by instances, a media that has ended (COMPLETED,
   * FAILED) never changes again: such an update rejects with MediaEndedError (a job that ran twice on two
   * instances leaves one result).
   */
  update(record: MediaRecord, changes: Partial<Omit<MediaRecord, 'uid'>>): Promise<void>;
  /** How far a PROCESSING media is; never fails (progress is a hint). */
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

/** One process: the records live in the store, on disk, as they always have. */
export class LocalRecords implements MediaRecords {
  constructor(private readonly store: MediaStore) {}

  get(uid: string): Promise<MediaRecord | undefined> {
    return Promise.resolve(this.store.get(uid));
  }

  all(): Promise<MediaRecord[]> {
    return Promise.resolve(this.store.all());
  }

  create(fields: NewMedia, uploaded?: IncomingFile): Promise<MediaRecord> {
    return this.store.create(fields, uploaded);
  }

  update(record: MediaRecord, changes: Partial<Omit<MediaRecord, 'uid'>>): Promise<void> {
    return this.store.update(record, changes);
  }

  setProgress(record: MediaRecord, progress: MediaProgress | undefined): void {
    this.store.setProgress(record, progress);
  }

  stateChange(uid: string, state: MediaState, signal: AbortSignal): Promise<void> {
    return this.store.stateChange(uid, state, signal);
  }

  async remove(uid: string): Promise<boolean> {
    const known = this.store.get(uid) !== undefined;
    await this.store.remove(uid);
    return known;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
