// A file told apart from another that later takes its name: its inode, size and modification time. A
// hard link and a rename keep all three, so a file put in place still bears the stamp of the part it was.
import { promises as fsp } from 'node:fs';

export interface FileStamp {
  ino: number;
  size: number;
  mtimeMs: number;
}

export async function stampOf(path: string): Promise<FileStamp> {
  const { ino, size, mtimeMs } = await fsp.stat(path);
  return { ino, size, mtimeMs };
}

/** Whether the name `path` (a link there is not followed) holds the file `stamp` describes. */
export async function bearsStamp(path: string, stamp: FileStamp): Promise<boolean> {
  const now = await fsp.lstat(path).catch(() => undefined);
  return now !== undefined && isStamped(now, stamp);
}

/** Whether a file's stat is the one `stamp` describes. */
export function isStamped(stat: FileStamp, stamp: FileStamp): boolean {
  return stat.ino === stamp.ino && stat.size === stamp.size && stat.mtimeMs === stamp.mtimeMs;
}

/**
 * Whether a file's stat is a copy of the file `stamp` describes, given its time (placeFile's copy where the
 * file system has no hard links): the same size and modification time, to the millisecond.
 */
export function isStampedCopy(stat: FileStamp, stamp: FileStamp): boolean {
  return stat.size === stamp.size && Math.abs(stat.mtimeMs - stamp.mtimeMs) < 1;
}

/** Whether `value` is a stamp as a journal kept it: three numbers. */
export function isFileStamp(value: unknown): value is FileStamp {
  const stamp = value as Partial<FileStamp> | null | undefined;
  return (['ino', 'size', 'mtimeMs'] as const).every((key) => typeof stamp?.[key] === 'number');
}
