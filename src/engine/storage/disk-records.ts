// Media records on disk, for one engine on its own: one folder per media under the data folder's `media`,
// named by its uid, holding `meta.json`, written atomically; the media's files (MediaFiles) are in the same
// folder by default (`input`, `output`, `loudness.json`), or in S3. Folders are 700 and files 600: only the
// account running the engine reads them.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { insideRoot } from '../../contract/contained-path';
import type { MediaState } from '../../contract/endpoints';
import type { MediaProgress } from '../../contract/media-progress';
import { PRIVATE_DIR, PRIVATE_FILE } from './local-media-files';
import type { MediaFiles } from './media-files';
import { newRecord, noteProgressSetAt, recordChanged, type MediaRecord, type NewMedia } from './media-record';
import type { MediaRecords } from './media-records';
import { ENGINE_UID, mintUid } from './media-uid';
import { StateWatchers } from './state-watchers';

const META = 'meta.json';
/** Every file the engine writes in a media folder (and work files `output.*`): one holding anything else is not the engine's alone. */
const MEDIA_FILES = new Set(['input', 'output', META, `${META}.tmp`, 'loudness.json', 'loudness.json.tmp']);

export class DiskRecords implements MediaRecords {
  private readonly media = new Map<string, MediaRecord>();
  private readonly writes = new Map<string, Promise<void>>();
  private readonly watchers = new StateWatchers();

  constructor(
    /** The folder of the media folders (`<data-dir>/media`). */
    private readonly root: string,
    private readonly files: MediaFiles,
    /** The engine's log: told of each folder the start removes. */
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** Loads every media kept on disk; returns those a restart must resume. */
  async open(): Promise<MediaRecord[]> {
    await fsp.mkdir(this.root, { recursive: true, mode: PRIVATE_DIR });
    // A folder an older version made 755 closes too: nothing under it can be reached any more. (A file
    // system without modes, or a folder of another owner, refuses: the engine still runs as it did.)
    await fsp.chmod(this.root, PRIVATE_DIR).catch(() => undefined);
    for (const uid of await fsp.readdir(this.root)) {
      if (!ENGINE_UID.test(uid)) continue; // not a media folder: never the engine's to load or remove
      let text: string;
      try {
        text = await fsp.readFile(join(this.root, uid, META), 'utf8');
      } catch (err) {
        // meta.json is written whole (temp file, then rename) before the 201: a folder without it was
        // never promised to anyone, and goes when it holds only what the engine writes. Any other read
        // error may be passing, so the folder is kept.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (await this.holdsOnlyEngineFiles(uid))) {
          await fsp.rm(this.folderOf(uid), { recursive: true, force: true });
          this.log(`removed media folder ${uid}: an upload whose record was never written (no job owns it)`);
        }
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

  newUid(): string {
    return mintUid();
  }

  get(uid: string): Promise<MediaRecord | undefined> {
    return Promise.resolve(this.media.get(uid));
  }

  all(): Promise<MediaRecord[]> {
    return Promise.resolve([...this.media.values()]);
  }

  async create(uid: string, fields: NewMedia): Promise<MediaRecord> {
    const record = newRecord(uid, fields, Date.now());
    await this.files.prepare(uid);
    // meta.json's folder: the files' own when they are in the data folder, made here when they are in S3.
    await fsp.mkdir(this.folderOf(uid), { recursive: true, mode: PRIVATE_DIR });
    await this.persist(record);
    this.media.set(uid, record);
    return record;
  }

  async update(record: MediaRecord, changes: Partial<Omit<MediaRecord, 'uid'>>): Promise<void> {
    const stateChanged =
      changes.enhancement_status !== undefined && changes.enhancement_status !== record.enhancement_status;
    Object.assign(record, changes, { updated_at: new Date().toISOString() });
    if (stateChanged) {
      delete record.progress;
      this.watchers.forgetProgress(record.uid);
    }
    recordChanged(record);
    // Woken with the change a status request reads (the record in memory), not once it is on disk: a
    // request that read the new state while it was written and then held must not be answered by it.
    if (stateChanged) this.watchers.wake(record.uid);
    await this.persist(record);
  }

  /** Sets how far a PROCESSING media is: shown in its metadata, not written to disk. */
  setProgress(record: MediaRecord, progress: MediaProgress | undefined): void {
    if (progress) {
      record.progress = progress;
      noteProgressSetAt(record, Date.now());
    } else delete record.progress;
    recordChanged(record);
    if (progress && this.watchers.progressStepped(record.uid, progress.percent)) this.watchers.wake(record.uid);
  }

  /**
   * Resolves once the media's state is other than `state` (at once if it is already), its progress has
   * moved on by PROGRESS_STEP, or `signal` aborts.
   */
  stateChange(uid: string, state: MediaState, signal: AbortSignal): Promise<void> {
    if (this.media.get(uid)?.enhancement_status !== state || signal.aborted) return Promise.resolve();
    return this.watchers.wait(uid, signal);
  }

  /** Forgets a media and deletes its files and folder (answers for it are 404 from here on). */
  async remove(uid: string): Promise<boolean> {
    const known = this.media.delete(uid);
    this.watchers.forgetProgress(uid);
    await this.files.remove(uid);
    await fsp.rm(this.folderOf(uid), { recursive: true, force: true });
    return known;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** A media's folder, checked to lie inside the records' folder before anything is written or removed there. */
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
