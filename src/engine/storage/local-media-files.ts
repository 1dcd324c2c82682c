// Media files in the data folder (the default, one engine on one machine): one folder per media, named
// by its uid, holding `input`, `output` (and each extra output, `output-<name>`) and `loudness.json`, and
// while a job runs, its run's folder; uploads arrive in `.incoming` and are moved into place when accepted.
// Folders are 700 and files 600: only the account running the engine reads them.
import { randomBytes } from 'node:crypto';
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
/** A job run's own folder in its media's folder: `.run-<random>`, gone when the run ends. */
const RUN_FOLDER_PREFIX = '.run-';

/** When a run's folder or any file in it last changed (ms since the epoch). */
async function lastChange(folder: string): Promise<number> {
  const names = await fsp.readdir(folder).catch(() => [] as string[]);
  const times = await Promise.all(
    [folder, ...names.map((name) => join(folder, name))].map((path) =>
      fsp.lstat(path).then(
        (stat) => stat.mtimeMs,
        () => 0,
      ),
    ),
  );
  return Math.max(...times);
}

/** A second name for a file (a hard link; a copy where the file system has none). */
async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await fsp.link(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS' && code !== 'EXDEV')
      throw err;
    await fsp.copyFile(from, to);
  }
}

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

  /**
   * A folder of the run's own in the media's folder (`.run-<random>`): a job run again while an earlier run
   * has not stopped (an engine that stood still past its lock, on a shared folder) never writes or removes
   * the other's files. The input is linked in; each result is renamed into place when saved.
   */
  async work(uid: string): Promise<WorkFiles> {
    const folder = this.folderOf(uid);
    // What runs stopped mid-job left (a crash) goes. With instances sharing the folder, another run may be
    // one that has not yet learnt it lost the job: only one untouched for STALE_INCOMING_MS goes.
    for (const name of await fsp.readdir(folder).catch(() => [] as string[])) {
      if (!name.startsWith(RUN_FOLDER_PREFIX)) continue;
      const left = join(folder, name);
      if (!this.shared || (await lastChange(left)) < Date.now() - STALE_INCOMING_MS)
        await fsp.rm(left, { recursive: true, force: true });
    }
    const run = join(folder, `${RUN_FOLDER_PREFIX}${randomBytes(6).toString('hex')}`);
    await fsp.mkdir(run, { mode: PRIVATE_DIR });
    const inRun = (file: MediaFileName) => join(run, file);
    // Whatever wrote it (a processor module, ffmpeg), the result is for the media's owner only.
    const save = async (file: MediaFileName) => {
      await fsp.chmod(inRun(file), PRIVATE_FILE);
      await fsp.rename(inRun(file), this.pathOf(uid, file));
    };
    return {
      inputPath: inRun('input'),
      outputPath: inRun('output'),
      loadInput: () => linkOrCopy(this.pathOf(uid, 'input'), inRun('input')),
      // A second name first, renamed into place: the run goes on reading its own.
      saveInput: async () => {
        const kept = join(run, 'input.kept');
        await linkOrCopy(inRun('input'), kept);
        await fsp.rename(kept, this.pathOf(uid, 'input'));
      },
      saveOutput: () => save('output'),
      namedOutputPath: (name) => inRun(namedOutputFile(name)),
      saveNamedOutput: (name) => save(namedOutputFile(name)),
      close: () => fsp.rm(run, { recursive: true, force: true }).catch(() => undefined),
    };
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
