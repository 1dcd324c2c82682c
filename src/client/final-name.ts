// Where a finished download goes when its name is taken: a numbered name beside it (`talk (1).wav`), an
// error, or the file replaced, as the caller says; never a name taken meanwhile, never the input file.
import { constants, promises as fsp } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { MediaEnhanceError } from './errors';
import { isStamped, isStampedCopy, type FileStamp } from './file-stamp';
import { isOurPart, type PartFile } from './part-file';
import { MAX_FILE_NAME_BYTES, truncateUtf8 } from './safe-file-name';

/** What a download to a file does when its final name is taken. */
export const IF_EXISTS = ['number', 'error', 'overwrite'] as const;
export type IfExists = (typeof IF_EXISTS)[number];
export const DEFAULT_IF_EXISTS: IfExists = 'number';

/** How many numbered names (`talk (1).wav`...) are tried before giving up. */
const MAX_NUMBERED_NAMES = 10_000;

/**
 * Puts the complete part at `wanted` as `options.ifExists` says, and answers the path it took. Unless
 * `overwrite`, the final name is created exclusively (a hard link that never replaces, or a copy that
 * never replaces where the file system has no hard links), so a name taken meanwhile is never lost.
 */
export async function placeFile(
  part: PartFile,
  wanted: string,
  options: { ifExists?: IfExists; neverReplace?: readonly string[] },
  uid: string,
): Promise<string> {
  if (!(await isOurPart(part)))
    throw new MediaEnhanceError('FILE', `the temporary file ${part.path} was replaced while it was written`, {
      mediaUid: uid,
    });
  const ifExists = options.ifExists ?? DEFAULT_IF_EXISTS;
  if (ifExists === 'overwrite') {
    await refuseToReplace(wanted, options.neverReplace ?? [], uid);
    await fsp.rename(part.path, wanted);
    return wanted;
  }
  for (let n = 0; n <= MAX_NUMBERED_NAMES; n++) {
    const candidate = n === 0 ? wanted : numberedName(wanted, n);
    try {
      await createExclusively(part.path, candidate);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (ifExists === 'error')
        throw new MediaEnhanceError(
          'FILE',
          `${wanted} already exists and is not replaced (if the file exists: error)`,
          {
            mediaUid: uid,
          },
        );
      continue;
    }
    await fsp.rm(part.path, { force: true });
    return candidate;
  }
  throw new MediaEnhanceError('FILE', `${wanted} and ${MAX_NUMBERED_NAMES} numbered names beside it are taken`, {
    mediaUid: uid,
  });
}

/**
 * Where the file `stamp` describes was put for `wanted`: that name or a numbered one beside it (they are
 * taken in order, so the search ends at the first free one); undefined when none holds it. For a caller
 * whose journal noted the file just before it was put in place (`beforePlace`), after a crash.
 */
export async function findPlaced(wanted: string, stamp: FileStamp): Promise<string | undefined> {
  for (let n = 0; n <= MAX_NUMBERED_NAMES; n++) {
    const candidate = n === 0 ? wanted : numberedName(wanted, n);
    const found = await fsp.lstat(candidate).catch(() => undefined);
    if (found === undefined) return undefined;
    if (isStamped(found, stamp) || isStampedCopy(found, stamp)) return candidate;
  }
  return undefined;
}

async function createExclusively(from: string, to: string): Promise<void> {
  try {
    await fsp.link(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
    await fsp.copyFile(from, to, constants.COPYFILE_EXCL);
    // A copy is a new inode: it keeps the part's size and is given its time, so findPlaced still knows it.
    const { atime, mtime } = await fsp.stat(from);
    await fsp.utimes(to, atime, mtime);
  }
}

/** `overwrite` never replaces the file being processed: the same file (device and inode) by another path too. */
async function refuseToReplace(wanted: string, neverReplace: readonly string[], uid: string): Promise<void> {
  const target = await fsp.stat(wanted).catch(() => undefined);
  if (!target) return;
  for (const path of neverReplace) {
    const kept = await fsp.stat(path).catch(() => undefined);
    if (kept && kept.dev === target.dev && kept.ino === target.ino)
      throw new MediaEnhanceError('FILE', `${wanted} is the input file ${path}: it is never replaced`, {
        mediaUid: uid,
      });
  }
}

/** `talk.wav` -> `talk (2).wav`, the stem cut (whole characters) so the name stays within 255 bytes. */
export function numberedName(path: string, n: number): string {
  const name = basename(path);
  const ext = extname(name);
  const suffix = ` (${n})${ext}`;
  const stem = truncateUtf8(name.slice(0, name.length - ext.length), MAX_FILE_NAME_BYTES - Buffer.byteLength(suffix));
  return join(dirname(path), `${stem}${suffix}`);
}
