// A download's temporary file beside its target: a name of its own (the fixed one a later download resumes
// from, or a random one), opened so that a link, a folder or a FIFO planted at that predictable name never
// makes the download write elsewhere, and checked to be still the same file before it is put in place.
import { randomBytes } from 'node:crypto';
import { constants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { DownloadStep } from '../contract/fields';
import { MAX_NAME_BYTES, truncateUtf8 } from './safe-file-name';

/** Temporary files written by a download of this process now: a second download of the same file gets its own. */
const partsInUse = new Set<string>();

export interface PartFile {
  path: string;
  /** Whether the name is the fixed one a later download looks for. */
  resumable: boolean;
  /** The file this download opened there (device and inode), once opened: what it renames is that file. */
  opened?: { dev: number; ino: number };
  release(): void;
}

/**
 * Where a download's part file goes: `.<uid>.<step>[.<target name>]` (then `.part`) beside the target,
 * hidden, and found again by a later download of the same file.
 */
export async function partLocation(
  target: string,
  uid: string,
  step: DownloadStep | undefined,
): Promise<{ intoFolder: boolean; stem: string }> {
  const intoFolder = await isDirectory(target);
  const name = `.${uid.replace(/[^\w.-]/g, '_')}.${step ?? 'ENHANCED'}${intoFolder ? '' : `.${basename(target)}`}`;
  return { intoFolder, stem: join(intoFolder ? target : dirname(target), truncateUtf8(name, MAX_NAME_BYTES)) };
}

/** Where a `resumable` download of this file keeps its part, so a caller can note it (and remove it if it gives the download up). */
export async function resumablePartPath(target: string, uid: string, step?: DownloadStep): Promise<string> {
  return `${(await partLocation(target, uid, step)).stem}.part`;
}

/**
 * The fixed name when resumable, free in this process and not taken by anything but a regular file (a
 * link, a folder or a FIFO planted at that predictable name is left alone); otherwise a random name.
 */
export async function claimPartFile(stem: string, resumable: boolean): Promise<PartFile> {
  const fixed = `${stem}.part`;
  const usable =
    resumable &&
    !partsInUse.has(fixed) &&
    (await fsp.lstat(fixed).then(
      (s) => s.isFile() && s.nlink === 1,
      (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
    ));
  const path = usable ? fixed : `${stem}.${randomBytes(6).toString('hex')}.part`;
  partsInUse.add(path);
  return { path, resumable: path === fixed, release: () => partsInUse.delete(path) };
}

/** The bytes a kept part holds: 0 unless it is a regular file (a link is never followed). */
export async function partSize(path: string): Promise<number> {
  return fsp.lstat(path).then(
    (s) => (s.isFile() ? s.size : 0),
    () => 0,
  );
}

/**
 * Opens the part for writing without following a link (O_NOFOLLOW) and without waiting on a FIFO
 * (O_NONBLOCK), and writes only into a regular file of one link: a name planted at the part's predictable
 * path never makes the download write elsewhere. A fresh random name is created exclusively (O_EXCL).
 * Emptied after the checks, not by O_TRUNC, which would empty whatever it opened.
 */
export async function openPart(part: PartFile, append: boolean): Promise<FileHandle> {
  const { O_WRONLY, O_CREAT, O_EXCL, O_APPEND } = constants;
  const flags =
    O_WRONLY |
    O_CREAT |
    (constants.O_NOFOLLOW ?? 0) |
    (constants.O_NONBLOCK ?? 0) |
    (append ? O_APPEND : 0) |
    (part.resumable || part.opened ? 0 : O_EXCL);
  const handle = await fsp.open(part.path, flags, 0o666);
  try {
    const stat = await handle.stat();
    const sameAsBefore = !part.opened || (part.opened.dev === stat.dev && part.opened.ino === stat.ino);
    if (!stat.isFile() || stat.nlink !== 1 || !sameAsBefore)
      throw Object.assign(new Error(`the temporary file ${part.path} is not a regular file of this download`), {
        code: 'EEXIST',
      });
    if (!append) await handle.truncate(0);
    part.opened = { dev: stat.dev, ino: stat.ino };
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Whether the part's name still holds the file this download opened (or nothing it opened yet). */
export async function isOurPart(part: PartFile): Promise<boolean> {
  const stat = await fsp.lstat(part.path).catch(() => undefined);
  if (!stat) return false;
  return part.opened ? stat.dev === part.opened.dev && stat.ino === part.opened.ino : stat.isFile();
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await fsp.stat(path)).isDirectory();
  } catch {
    return false;
  }
}
