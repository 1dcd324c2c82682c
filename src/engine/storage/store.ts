import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { insideRoot } from '../../contract/contained-path';
import type { EnhancementSettings } from '../../contract/fields';
import type { MediaState } from '../../contract/endpoints';
import type { MediaProgress } from '../../contract/media-progress';
import { ENGINE_UID, LocalMediaFiles, PRIVATE_DIR, PRIVATE_FILE } from './local-media-files';
import type { IncomingFile, MediaFiles } from './media-files';
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
  };
}

const META = 'meta.json';
/** Every file the engine writes in a media folder (and work files `output.*`): one holding anything else is not the engine's alone. */
const MEDIA_FILES = new Set(['input', 'output', META, `${META}.tmp`, 'loudness.json', 'loudness.json.tmp']);

/**
 * Media records on disk: one folder per media, named by its uid (which the engine makes, so a client's file
 * name never chooses a path), holding `meta.json`, written atomically; the media's files are in `files`
 * (by default the same folder: `input`, `output` and, once processed, `loudness.json`). Folders
 * are 700 and files 600: only the account running the engine reads them.
 */
export class MediaStore {
  private readonly media = new Map<string, MediaRecord>();
  private readonly writes = new Map<string, Promise<void>>();
  /** Who waits for a media's state to change (held metadata requests), by uid. */
  private readonly stateWatchers = new Map<string, Set<() => void>>();
  readonly root: string;
  /** The media's files: in the data folder, or in the storage `--storage` names. */
  readonly files: MediaFiles;

  constructor(
    dataDir: string,
    files?: MediaFiles,
    /**
     * Whether other engine instances use the same folder (the records are in Redis): then a start loads
     * no meta.json and never sweeps what another instance may be writing.
     */
    private readonly shared = false,
  ) {
    this.root = join(dataDir, 'media');
    this.files = files ?? new LocalMediaFiles(this.root, shared);
  }

  /** Loads every media kept on disk; returns those a restart must resume. */
  async open(): Promise<MediaRecord[]> {
    await fsp.mkdir(this.root, { recursive: true, mode: PRIVATE_DIR });
    // A folder an older version made 755 closes too: nothing under it can be reached any more. (A file
    // system without modes, or a folder of another owner, refuses: the engine still runs as it did.)
    await fsp.chmod(this.root, PRIVATE_DIR).catch(() => undefined);
    await this.files.open();
    if (this.shared) return [];
    for (const uid of await fsp.readdir(this.root)) {
      if (!ENGINE_UID.test(uid)) continue; // not a media folder: never the engine's to load or remove
      let text: string;
      try {
        text = await fsp.readFile(join(this.root, uid, META), 'utf8');
      } catch (err) {
        // meta.json is written whole (temp file, then rename) before the 201: a folder without it was
        // never promised to anyone, and goes when it holds only what the engine writes. Any other read
        // error may be passing, so the folder is kept.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (await this.holdsOnlyEngineFiles(uid)))
          await fsp.rm(this.folderOf(uid), { recursive: true, force: true });
        continue;
      }
      try {
        const record = JSON.parse(text) as MediaRecord;
        // A record naming another folder than its own would make a later removal reach that folder.
        if (record?.uid === uid) this.media.set(record.uid, record);
      } catch {
        // Damaged by something else than this engine: never delete an accepted media; it stays on disk for a person to look at.
      }
    }
    return [...this.media.values()].filter(
      (m) => m.enhancement_status === 'PENDING' || m.enhancement_status === 'PROCESSING',
    );
  }

  get(uid: string): MediaRecord | undefined {
    return this.media.get(uid);
  }

  all(): MediaRecord[] {
    return [...this.media.values()];
  }

  /** Forgets a media and deletes its files and folder (answers for it are 404 from here on). */
  async remove(uid: string): Promise<void> {
    this.media.delete(uid);
    await this.files.remove(uid);
    await fsp.rm(this.folderOf(uid), { recursive: true, force: true });
  }

  /** A media's folder, checked to lie inside the store before anything is written or removed there. */
  private folderOf(uid: string): string {
    return insideRoot(this.root, join(this.root, uid));
  }

  /** Whether a folder without metadata holds nothing but files the engine writes (regular files, no links). */
  private async holdsOnlyEngineFiles(uid: string): Promise<boolean> {
    const folder = this.folderOf(uid);
    if (!(await fsp.lstat(folder)).isDirectory()) return false;
    for (const name of await fsp.readdir(folder)) {
      const ours = MEDIA_FILES.has(name) || name.startsWith('output.');
      if (!ours || !(await fsp.lstat(join(folder, name))).isFile()) return false;
    }
    return true;
  }

  /** Creates a media (making its stored upload, if any, its input) and persists it before anyone is told of it. */
  async create(
    fields: Omit<MediaRecord, 'uid' | 'enhancement_status' | 'inserted_at' | 'updated_at'>,
    uploaded?: IncomingFile,
  ): Promise<MediaRecord> {
    const uid = uploaded?.uid ?? randomUUID();
    const now = new Date().toISOString();
    const record: MediaRecord = { uid, enhancement_status: 'PENDING', inserted_at: now, updated_at: now, ...fields };
    await fsp.mkdir(this.folderOf(uid), { mode: PRIVATE_DIR }); // its meta.json's, and its local files'
    if (uploaded) await this.files.adoptUpload(uploaded.id, uid);
    await this.persist(record);
    this.media.set(uid, record);
    return record;
  }

  async update(record: MediaRecord, changes: Partial<Omit<MediaRecord, 'uid'>>): Promise<void> {
    const stateChanged =
      changes.enhancement_status !== undefined && changes.enhancement_status !== record.enhancement_status;
    Object.assign(record, changes, { updated_at: new Date().toISOString() });
    if (stateChanged) delete record.progress;
    serialized.delete(record);
    try {
      await this.persist(record);
    } finally {
      if (stateChanged) this.wakeStateWatchers(record.uid);
    }
  }

  /**
   * Sets how far a PROCESSING media is: shown in its metadata, not written to disk, `updated_at` untouched.
   * A held status request is answered when the share done has moved on by PROGRESS_STEP since the last
   * one was, so a person sees a job move however short it is (a few answers more per media at most).
   */
  setProgress(record: MediaRecord, progress: MediaProgress | undefined): void {
    if (progress) {
      record.progress = progress;
      progressSetAt.set(record, Date.now());
    } else delete record.progress;
    serialized.delete(record);
    if (progress && progress.percent - (progressAnswered.get(record) ?? 0) >= PROGRESS_STEP) {
      progressAnswered.set(record, progress.percent);
      this.wakeStateWatchers(record.uid);
    }
  }

  /**
   * Resolves once the media's state is other than `state` (at once if it is already), its progress has
   * moved on by PROGRESS_STEP, or `signal` aborts; resolves, never rejects: the caller then answers with
   * the media as it is.
   */
  stateChange(uid: string, state: MediaState, signal: AbortSignal): Promise<void> {
    if (this.media.get(uid)?.enhancement_status !== state || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      let watchers = this.stateWatchers.get(uid);
      if (!watchers) this.stateWatchers.set(uid, (watchers = new Set()));
      const done = () => {
        watchers.delete(done);
        if (watchers.size === 0 && this.stateWatchers.get(uid) === watchers) this.stateWatchers.delete(uid);
        signal.removeEventListener('abort', done);
        resolve();
      };
      watchers.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private wakeStateWatchers(uid: string): void {
    for (const wake of [...(this.stateWatchers.get(uid) ?? [])]) wake();
  }

  /** Writes of one media's metadata happen in order, each whole (temp file, then rename). */
  private persist(record: MediaRecord): Promise<void> {
    const file = join(this.folderOf(record.uid), META);
    const { progress: _progress, ...kept } = record;
    const snapshot = JSON.stringify(kept);
    const previous = this.writes.get(record.uid) ?? Promise.resolve();
    const write = previous.then(async () => {
      const temp = `${file}.tmp`;
      await fsp.writeFile(temp, snapshot, { mode: PRIVATE_FILE });
      await fsp.rename(temp, file);
    });
    const tail = write.catch(() => undefined);
    this.writes.set(record.uid, tail);
    // Once no later write is queued behind it, forget the media's queue: the map holds only media being written.
    void tail.then(() => this.writes.get(record.uid) === tail && this.writes.delete(record.uid));
    return write;
  }
}

/** When each media's progress was last set: its time left counts down from then until the next. */
const progressSetAt = new WeakMap<MediaRecord, number>();

/** For a record read back from shared state: its progress was set at `at` (ms since the epoch). */
export function noteProgressSetAt(record: MediaRecord, at: number): void {
  progressSetAt.set(record, at);
}

/** The percent done when held status requests were last answered for progress. */
const progressAnswered = new WeakMap<MediaRecord, number>();
/** Points of progress (percent) that answer a held status request. */
const PROGRESS_STEP = 10;

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

/** Metadata JSON per record, dropped by every update. */
const serialized = new WeakMap<MediaRecord, Buffer>();

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
