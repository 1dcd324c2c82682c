// The files the editor's audio player plays: each fetched from its service once (one download of the
// editor's share), kept in a private temporary folder and served from there, so that the media element's
// many Range requests (to read the duration, to seek) cost the service nothing more. A few files are
// kept, up to a total size, the least recently played going first; the folder goes when Node-RED exits.
import { mkdtempSync, promises as fsp, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How many files are kept: the two of the result open now and those of a few opened before. */
export const PLAY_FILES_KEPT = 6;
/** How many bytes the kept files may take in all (a video can be large); the file just fetched always stays. */
export const PLAY_BYTES_KEPT = 1024 ** 3;

export interface PlayFile {
  path: string;
  contentType: string;
  /** Its size in bytes. */
  size: number;
}

/** Writes the file to `path` and says its type; rejects when it could not. */
export type FetchToPath = (path: string) => Promise<{ contentType: string }>;

export class PlayCache {
  private folder: string | undefined;
  private readonly files = new Map<string, Promise<PlayFile>>();
  /** The sizes of the files fetched so far, by key. */
  private readonly sizes = new Map<string, number>();
  private made = 0;

  constructor(
    private readonly kept = PLAY_FILES_KEPT,
    private readonly bytesKept = PLAY_BYTES_KEPT,
  ) {}

  /** The file under `key`, fetched with `fetch` the first time (one fetch however many ask at once). */
  file(key: string, fetch: FetchToPath): Promise<PlayFile> {
    let found = this.files.get(key);
    if (found) {
      this.files.delete(key); // to the end: the most recently played
      this.files.set(key, found);
      return found;
    }
    const path = join(this.ownFolder(), `play-${++this.made}`);
    found = fetch(path).then(async ({ contentType }) => {
      const file = { path, contentType, size: (await fsp.stat(path)).size };
      if (this.files.get(key) === found) {
        this.sizes.set(key, file.size);
        this.keepWithinBytes(key);
      }
      return file;
    });
    this.files.set(key, found);
    // A failed fetch is tried again at the next request, and leaves no file behind.
    found.catch(() => {
      if (this.files.get(key) === found) this.forget(key);
      void fsp.rm(path, { force: true });
    });
    while (this.files.size > this.kept) this.forget(this.files.keys().next().value!);
    return found;
  }

  /** Forgets the file under `key` (its media was removed), if kept. */
  forgetFile(key: string): void {
    if (this.files.has(key)) this.forget(key);
  }

  /** Forgets every file (the media they came from were removed). */
  clear(): void {
    for (const key of [...this.files.keys()]) this.forget(key);
  }

  /** Forgets the least recently played fetched files while they take more than the bytes kept, `newest` aside. */
  private keepWithinBytes(newest: string): void {
    let total = 0;
    for (const size of this.sizes.values()) total += size;
    for (const key of [...this.files.keys()]) {
      if (total <= this.bytesKept) return;
      const size = this.sizes.get(key);
      if (key === newest || size === undefined) continue;
      total -= size;
      this.forget(key);
    }
  }

  private forget(key: string): void {
    const file = this.files.get(key);
    this.files.delete(key);
    this.sizes.delete(key);
    void file?.then(
      ({ path }) => fsp.rm(path, { force: true }),
      () => undefined,
    );
  }

  private ownFolder(): string {
    if (!this.folder) {
      // mkdtemp makes it 700: recordings are private to the account running Node-RED.
      const folder = mkdtempSync(join(tmpdir(), 'media-enhance-play-'));
      process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
      this.folder = folder;
    }
    return this.folder;
  }
}
