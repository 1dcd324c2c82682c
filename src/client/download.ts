import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { constants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileNameFromDisposition } from '../contract/attachment';
import { PATHS } from '../contract/endpoints';
import type { Step } from '../contract/fields';
import type { RetryPolicy } from './backoff';
import { sleep, type Clock } from './clock';
import { fileError, MediaEnhanceError } from './errors';
import type { Slot } from './rate-limiter';
import { decideRetry, type DownloadFailure } from './retry-decision';
import { BODY_HIGH_WATER_MARK, headerText, type Response, type Transport, type WaitEvent } from './transport';
import type { ProgressCallback } from './types';

export interface DownloadOptions {
  /** ENHANCED (default): the processed file; PRE: the file as it was received. */
  step?: Step;
  /**
   * For `downloadToFile`: the temporary file gets a name fixed by the media, the step and the target, is
   * kept when the download is aborted, and a later download of the same file continues from it with a
   * Range request. It is still removed when the download gives up on an error.
   */
  resumable?: boolean;
  /**
   * For `downloadToFile`, when a file of the final name exists: `number` (default) writes `talk (1).wav`,
   * `talk (2).wav`...; `error` fails with code FILE naming the file; `overwrite` replaces it. The file is
   * created exclusively unless `overwrite`: two downloads racing for one name get two files.
   */
  ifExists?: IfExists;
  /** Paths never replaced, even with `overwrite` (the file being processed): same file, code FILE. */
  neverReplace?: readonly string[];
  signal?: AbortSignal;
  onProgress?: ProgressCallback;
  onWait?: (event: WaitEvent) => void;
  /**
   * For `downloadFile`: false sends only if the window has a place now and no call waits for one, else
   * fails at once with RATE_LIMITED; such a call is never retried (a retry would go to the head of the
   * line). For downloads that must never delay anyone's (the editor sidebar's). Default true: wait in line.
   */
  waitForPlace?: boolean;
}

/** What a download to a file does when its final name is taken. */
export const IF_EXISTS = ['number', 'error', 'overwrite'] as const;
export type IfExists = (typeof IF_EXISTS)[number];
export const DEFAULT_IF_EXISTS: IfExists = 'number';

export interface DownloadedStream {
  stream: Readable;
  contentType: string;
  /** The name the service gives the file, made safe to use as a file name. */
  fileName: string;
  /** Bytes, when the service says. */
  size?: number;
}

export interface DownloadedFile {
  path: string;
  contentType: string;
  fileName: string;
  size: number;
}

export interface DownloadContext {
  transport: Transport;
  clock: Clock;
  retry: RetryPolicy;
  random: () => number;
}

function fileRequest(uid: string, options: DownloadOptions, headers?: Record<string, string>, slot?: Slot) {
  const query = options.step ? `?step=${encodeURIComponent(options.step)}` : '';
  return {
    ...(slot ? { slot, maxRetries: 0 } : {}),
    endpoint: 'downloadFile' as const,
    method: 'GET' as const,
    path: PATHS.file(uid) + query,
    headers,
    signal: options.signal,
    onWait: options.onWait,
    mediaUid: uid,
  };
}

export async function downloadStream(
  ctx: DownloadContext,
  uid: string,
  options: DownloadOptions,
  slot?: Slot,
): Promise<DownloadedStream> {
  const res = await ctx.transport.send(fileRequest(uid, options, undefined, slot));
  const size = contentLength(res);
  const info = describeResponse(res, uid, options.step);
  const stream = progressCounter(0, size, options.onProgress);
  // pipeline (unlike pipe) passes a broken connection on to the reader as an error on `stream`.
  pipeline(res.body, stream).catch(() => undefined);
  return { ...info, size, stream };
}

/**
 * Downloads into a temporary file beside the target and renames it into place only when complete, so
 * a partial file never stands where a finished one is expected. A connection lost mid-way resumes
 * with a Range request where the service allows it; with `resumable`, so does a later call.
 */
export async function downloadToFile(
  ctx: DownloadContext,
  uid: string,
  target: string,
  options: DownloadOptions,
): Promise<DownloadedFile> {
  const { intoFolder, stem } = await partLocation(target, uid, options.step);
  const part = await claimPartFile(stem, options.resumable === true);
  let written = part.resumable ? await partSize(part.path) : 0;
  let lastError: unknown;
  /** Throws (`error`, or "broke off" once the retries are spent) or waits, as `decideRetry` says. */
  const retryOrThrow = async (attempt: number, failure: DownloadFailure, error: unknown) => {
    const decision = decideRetry({ loop: 'download', failure, attempt, policy: ctx.retry, random: ctx.random });
    if (!decision.retry) {
      if (decision.reason !== 'retries-spent') throw error;
      throw new MediaEnhanceError(
        'NETWORK',
        `the download broke off ${ctx.retry.maxRetries + 1} times, the last: ${(lastError as Error)?.message} (GET ${PATHS.file(uid)})`,
        {
          mediaUid: uid,
          retryable: true,
          cause: lastError,
        },
      );
    }
    if (decision.afterMs === 0) return; // a short body or an outdated part is asked for again at once
    await sleep(ctx.clock, decision.afterMs, options.signal).catch((cause: unknown) => {
      throw options.signal?.aborted ? aborted(uid, cause) : cause;
    });
  };
  try {
    // A loop around a loop: each request below goes through the transport's retry loop (transport.ts), which
    // retries until the service answers 2xx; this one resumes a body cut off after that. Each spends its own
    // `maxRetries`: (maxRetries + 1)² requests at most, more while the service refuses connections.
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await ctx.transport.send(
          fileRequest(uid, options, written > 0 ? { range: `bytes=${written}-` } : undefined),
        );
      } catch (err) {
        // A kept part longer than the file (the service's copy changed): start over.
        if (!(err instanceof MediaEnhanceError && err.status === 416 && written > 0)) throw err;
        await retryOrThrow(attempt, 'part-outdated', err);
        written = 0;
        continue;
      }
      if (res.statusCode !== 206) written = 0; // the service sent the whole file again
      const total = res.statusCode === 206 ? rangeTotal(res) : contentLength(res);
      const info = describeResponse(res, uid, options.step);
      let connectionError: unknown;
      res.body.once('error', (err) => (connectionError = err));
      let handle: FileHandle;
      try {
        handle = await openPart(part, written > 0);
      } catch (err) {
        res.body.destroy();
        throw err;
      }
      const file = handle.createWriteStream({ highWaterMark: BODY_HIGH_WATER_MARK });
      try {
        const counter = progressCounter(written, total, options.onProgress, (n) => (written = n));
        await pipeline(res.body, counter, file, { signal: options.signal });
      } catch (err) {
        // Wait for the file to be closed: a removal while it is still open would leave it behind.
        if (!file.closed) await once(file, 'close').catch(() => undefined);
        if (options.signal?.aborted) throw aborted(uid, err);
        // Without a connection error, the disk failed.
        if (connectionError !== undefined) lastError = connectionError;
        await retryOrThrow(
          attempt,
          connectionError === undefined ? 'disk' : 'cut',
          connectionError === undefined ? fileError(err, `writing ${part.path}`, uid) : err,
        );
        // Resume from what reached the disk: bytes counted but still buffered in the write stream were lost with it.
        written = await partSize(part.path);
        continue;
      }
      if (total !== undefined && written !== total) {
        lastError = new Error(`received ${written} of ${total} bytes`);
        await retryOrThrow(attempt, 'short', lastError);
        continue;
      }
      const wanted = intoFolder ? join(target, info.fileName) : target;
      const finalPath = await placeFile(part, wanted, options, uid);
      return {
        path: finalPath,
        contentType: info.contentType,
        fileName: basename(finalPath),
        size: written,
      };
    }
  } catch (err) {
    // Stopped (a redeploy, a restart): a later call continues from the part. Any other end removes it.
    if (!(part.resumable && options.signal?.aborted) && (await isOurPart(part)))
      await fsp.rm(part.path, { force: true });
    // A local file that cannot be written is the caller's to fix, not the service's: code FILE.
    throw err instanceof MediaEnhanceError ? err : fileError(err, `writing ${target}`, uid);
  } finally {
    part.release();
  }
}

/** Temporary files written by a download of this process now: a second download of the same file gets its own. */
const partsInUse = new Set<string>();

interface PartFile {
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
async function partLocation(
  target: string,
  uid: string,
  step: Step | undefined,
): Promise<{ intoFolder: boolean; stem: string }> {
  const intoFolder = await isDirectory(target);
  const name = `.${uid.replace(/[^\w.-]/g, '_')}.${step ?? 'ENHANCED'}${intoFolder ? '' : `.${basename(target)}`}`;
  return { intoFolder, stem: join(intoFolder ? target : dirname(target), truncateUtf8(name, MAX_NAME_BYTES)) };
}

/** Where a `resumable` download of this file keeps its part, so a caller can note it (and remove it if it gives the download up). */
export async function resumablePartPath(target: string, uid: string, step?: Step): Promise<string> {
  return `${(await partLocation(target, uid, step)).stem}.part`;
}

/**
 * The fixed name when resumable, free in this process and not taken by anything but a regular file (a
 * link, a folder or a FIFO planted at that predictable name is left alone); otherwise a random name.
 */
async function claimPartFile(stem: string, resumable: boolean): Promise<PartFile> {
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
async function partSize(path: string): Promise<number> {
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
async function openPart(part: PartFile, append: boolean): Promise<FileHandle> {
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
async function isOurPart(part: PartFile): Promise<boolean> {
  const stat = await fsp.lstat(part.path).catch(() => undefined);
  if (!stat) return false;
  return part.opened ? stat.dev === part.opened.dev && stat.ino === part.opened.ino : stat.isFile();
}

/** How many numbered names (`talk (1).wav`...) are tried before giving up. */
const MAX_NUMBERED_NAMES = 10_000;

/**
 * Puts the complete part at `wanted` as `options.ifExists` says, and answers the path it took. Unless
 * `overwrite`, the final name is created exclusively (a hard link that never replaces, or a copy that
 * never replaces where the file system has no hard links), so a name taken meanwhile is never lost.
 */
async function placeFile(part: PartFile, wanted: string, options: DownloadOptions, uid: string): Promise<string> {
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

async function createExclusively(from: string, to: string): Promise<void> {
  try {
    await fsp.link(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
    await fsp.copyFile(from, to, constants.COPYFILE_EXCL);
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

function aborted(uid: string, cause: unknown): MediaEnhanceError {
  return new MediaEnhanceError('ABORTED', `aborted (GET ${PATHS.file(uid)})`, { mediaUid: uid, cause });
}

function describeResponse(res: Response, uid: string, step?: Step): { contentType: string; fileName: string } {
  const contentType = headerText(res.headers['content-type']) ?? 'application/octet-stream';
  const fileName =
    safeFileName(fileNameFromDisposition(headerText(res.headers['content-disposition']))) ??
    safeFileName(`${uid}${step === 'PRE' ? '' : '_enhanced'}`)!;
  return { contentType, fileName };
}

/** A name from the service never chooses a folder: only its last part, without control characters. */
export function safeFileName(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const last = name.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex -- control characters are what this pattern takes out of a file name
  const clean = last.replace(/[\u0000-\u001f\u007f<>:"|?*]/g, '_').trim();
  // A leading dot would hide the file (or name `.bashrc`, `..`): such a name is not taken from a service.
  if (clean === '' || clean.startsWith('.')) return undefined;
  return truncateUtf8(clean, MAX_NAME_BYTES);
}

/** File systems count a name's bytes (255 at most on most); the cut keeps whole characters. */
const MAX_NAME_BYTES = 200;
export const MAX_FILE_NAME_BYTES = 255;

function truncateUtf8(name: string, maxBytes: number): string {
  if (Buffer.byteLength(name) <= maxBytes) return name;
  let out = '';
  let bytes = 0;
  for (const char of name) {
    bytes += Buffer.byteLength(char);
    if (bytes > maxBytes) break;
    out += char;
  }
  return out;
}

function progressCounter(
  start: number,
  total: number | undefined,
  onProgress?: ProgressCallback,
  onCount?: (n: number) => void,
): Transform {
  let done = start;
  return new Transform({
    highWaterMark: BODY_HIGH_WATER_MARK,
    transform(chunk: Buffer, _enc, callback) {
      done += chunk.length;
      onCount?.(done);
      onProgress?.(done, total);
      callback(null, chunk);
    },
  });
}

function contentLength(res: Response): number | undefined {
  const text = headerText(res.headers['content-length']);
  const value = Number(text);
  return text !== undefined && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function rangeTotal(res: Response): number | undefined {
  const match = /\/(\d+)\s*$/.exec(headerText(res.headers['content-range']) ?? '');
  return match ? Number(match[1]) : undefined;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await fsp.stat(path)).isDirectory();
  } catch {
    return false;
  }
}
