// Media files in the data folder (the default, one engine on one machine): one folder per media, named
// by its uid, holding `input`, `output` (and each extra output, `output-<name>`) and `loudness.json`; uploads arrive in `.incoming` and are moved
// into place when accepted. Folders are 700 and files 600: only the account running the engine reads them.
import { once } from 'node:events';
import { createReadStream, createWriteStream, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { insideRoot } from '../../contract/contained-path';
import type { LoudnessReport } from '../../contract/loudness-report';
import type { UploadFs } from '../faults';
import { bytesUnder } from './bytes-under';
import {
  isMediaFile,
  namedOutputFile,
  type IncomingFile,
  type MediaFileName,
  type MediaFiles,
  type WorkFiles,
} from './media-files';
import { ENGINE_UID } from './media-uid';

/** Uploads are the users' own: on a shared machine no other account may list or read them. */
export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;
/** Untouched this long, an upload in a shared `.incoming` folder is a dead instance's leftover. */
const STALE_INCOMING_MS = 3600_000;
/** The loudness report (a local-engine extension), beside the output it describes. */
const LOUDNESS_REPORT = 'loudness.json';
/**
 * Buffering of an upload on its way to disk. At the 16 KiB default, each 64 KiB network read fills the
 * write stream past its mark and the upload waits for each write to finish before reading on; with room
 * for a few reads, writes overlap the network and go out as one writev (curl 478 -> 623 MiB/s, the client
 * 352 -> 393 MiB/s, 256 MiB runs of bench/client-transfer).
 */
export const FILE_WRITE_BUFFER = 1024 * 1024;
/**
 * Reads of a file being sent. fs streams read 64 KiB at a time by default; at that size the engine's work per
 * chunk, not the bytes, caps a download on loopback for every client (1 MiB reads: curl 584 -> 969 MiB/s, the
 * client 395 -> 472 MiB/s, 256 MiB runs of bench/client-transfer). Memory stays flat: one read in flight and
 * the socket's buffer per download.
 */
const FILE_READ_CHUNK = 1024 * 1024;

export class LocalMediaFiles implements MediaFiles {
  /**
   * `root`: the folder of the media folders (the records' folder too: the two share each media's folder).
   * `shared`: other engine instances use the same folder (their records in Redis).
   */
  constructor(
    private readonly root: string,
    private readonly shared = false,
  ) {}

  async open(): Promise<void> {
    await fsp.mkdir(this.incomingDir(), { recursive: true, mode: PRIVATE_DIR });
    // A folder an older version made 755 closes too: nothing under it can be reached any more. (A file
    // system without modes, or a folder of another owner, refuses: the engine still runs as it did.)
    await fsp.chmod(this.root, PRIVATE_DIR).catch(() => undefined);
    // Uploads cut off by the last stop were never accepted: their partial files go. Only what the engine
    // names itself: the data folder may be one a person chose, holding things of their own. With instances
    // sharing the folder, an upload may be another instance's, still arriving: only those untouched for
    // STALE_INCOMING_MS go (an arriving upload is written to all the time; a stalled one is cut by the idle
    // timeout long before), the leftovers of an instance that died.
    const before = this.shared ? Date.now() - STALE_INCOMING_MS : Infinity;
    for (const name of await fsp.readdir(this.incomingDir())) {
      if (!ENGINE_UID.test(name)) continue;
      const path = insideRoot(this.incomingDir(), join(this.incomingDir(), name));
      const stat = this.shared ? await fsp.lstat(path).catch(() => undefined) : undefined;
      if (!this.shared || (stat && stat.mtimeMs < before)) await fsp.rm(path, { force: true, recursive: true });
    }
  }

  close(): void {
    // nothing held open between calls
  }

  async ping(): Promise<void> {
    await fsp.access(this.root);
  }

  receive(uid: string, fs?: UploadFs): IncomingFile {
    const path = insideRoot(this.incomingDir(), join(this.incomingDir(), uid));
    const out = createWriteStream(path, {
      mode: PRIVATE_FILE,
      highWaterMark: FILE_WRITE_BUFFER,
      ...(fs ? { fs } : {}),
    });
    return {
      uid,
      localPath: path,
      stream: out,
      failure: () => undefined, // a failing disk fails the stream itself
      stored: () => Promise.resolve(), // the stream finished: the bytes are in the file
      keep: async () => {
        await this.prepare(uid);
        await fsp.rename(path, this.pathOf(uid, 'input'));
      },
      discard: async () => {
        // The file may still be opening: remove it only once it is closed, or the open would create it again.
        const closed = out.closed ? Promise.resolve() : once(out, 'close').catch(() => undefined);
        out.destroy();
        await closed;
        await fsp.rm(path, { force: true }).catch(() => undefined);
      },
    };
  }

  async prepare(uid: string): Promise<void> {
    await fsp.mkdir(this.folderOf(uid), { recursive: true, mode: PRIVATE_DIR });
  }

  async size(uid: string, file: MediaFileName): Promise<number> {
    return (await fsp.stat(this.pathOf(uid, file))).size;
  }

  read(uid: string, file: MediaFileName, start: number, end: number): Promise<Readable> {
    return Promise.resolve(createReadStream(this.pathOf(uid, file), { start, end, highWaterMark: FILE_READ_CHUNK }));
  }

  work(uid: string): Promise<WorkFiles> {
    const outputPath = this.pathOf(uid, 'output');
    return Promise.resolve({
      inputPath: this.pathOf(uid, 'input'),
      outputPath,
      loadInput: () => Promise.resolve(), // the files are where they are kept
      saveInput: () => Promise.resolve(),
      // Whatever wrote it (a processor module, ffmpeg), the result is for the media's owner only.
      saveOutput: () => fsp.chmod(outputPath, PRIVATE_FILE),
      namedOutputPath: (name) => this.pathOf(uid, namedOutputFile(name)),
      saveNamedOutput: (name) => fsp.chmod(this.pathOf(uid, namedOutputFile(name)), PRIVATE_FILE),
      close: () => Promise.resolve(),
    });
  }

  async saveLoudnessReport(uid: string, report: LoudnessReport): Promise<void> {
    const file = join(this.folderOf(uid), LOUDNESS_REPORT);
    await fsp.writeFile(`${file}.tmp`, JSON.stringify(report), { mode: PRIVATE_FILE });
    await fsp.rename(`${file}.tmp`, file);
  }

  async loudnessReportJson(uid: string): Promise<Buffer | undefined> {
    try {
      return await fsp.readFile(join(this.folderOf(uid), LOUDNESS_REPORT));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async remove(uid: string): Promise<void> {
    await fsp.rm(this.folderOf(uid), { recursive: true, force: true });
  }

  async fileBytes(uid: string): Promise<number> {
    const names = (await fsp.readdir(this.folderOf(uid)).catch(() => [] as string[])).filter(isMediaFile);
    const sizes = await Promise.all(
      names.map((file) =>
        fsp.stat(this.pathOf(uid, file)).then(
          (s) => s.size,
          () => 0,
        ),
      ),
    );
    return sizes.reduce((sum, size) => sum + size, 0);
  }

  allBytes(uid: string): Promise<number> {
    return bytesUnder(this.folderOf(uid));
  }

  bytesUsed(): Promise<number> {
    return bytesUnder(this.root);
  }

  private pathOf(uid: string, file: MediaFileName): string {
    return join(this.folderOf(uid), file);
  }

  /** A media's folder, checked to lie inside the store before anything is written or removed there. */
  private folderOf(uid: string): string {
    return insideRoot(this.root, join(this.root, uid));
  }

  private incomingDir(): string {
    return join(this.root, '.incoming');
  }
}
