// Downloads of a media's file: as a stream, or into a file that is put in place only when complete; a
// connection lost mid-way resumes with a Range request. The part file's safety is part-file.ts, the final
// name final-name.ts.
import { once } from 'node:events';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileNameFromDisposition } from '../contract/attachment';
import { PATHS } from '../contract/endpoints';
import type { DownloadStep } from '../contract/fields';
import type { RetryPolicy } from './backoff';
import { sleep, type Clock } from './clock';
import { fileError, MediaEnhanceError } from './errors';
import { stampOf, type FileStamp } from './file-stamp';
import { placeFile, type IfExists } from './final-name';
import { claimPartFile, isOurPart, openPart, partLocation, partSize } from './part-file';
import type { Slot } from './rate-limiter';
import { decideRetry, type DownloadFailure } from './retry-decision';
import { BODY_HIGH_WATER_MARK, headerText, type Response, type Transport, type WaitEvent } from './transport';
import { safeFileName } from './safe-file-name';
import type { ProgressCallback } from './types';

export interface DownloadOptions {
  /**
   * ENHANCED (default): the processed file; PRE: the file as it was received; or the name of one of the
   * media's extra outputs (the several-outputs extension: docs/interface.md#several-outputs).
   */
  step?: DownloadStep;
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
  /**
   * For `downloadToFile`: told where the complete file goes and its stamp just before it is put there.
   * A caller that journals the files it delivered notes it, so that after a crash between the two it
   * finds the file in place (`findPlaced`) rather than fetching a second copy beside it.
   */
  beforePlace?: (placing: { path: string; contentType: string; stamp: FileStamp }) => Promise<void>;
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
      await options.beforePlace?.({ path: wanted, contentType: info.contentType, stamp: await stampOf(part.path) });
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

function aborted(uid: string, cause: unknown): MediaEnhanceError {
  return new MediaEnhanceError('ABORTED', `aborted (GET ${PATHS.file(uid)})`, { mediaUid: uid, cause });
}

function describeResponse(res: Response, uid: string, step?: DownloadStep): { contentType: string; fileName: string } {
  const contentType = headerText(res.headers['content-type']) ?? 'application/octet-stream';
  const fileName =
    safeFileName(fileNameFromDisposition(headerText(res.headers['content-disposition']))) ??
    safeFileName(`${uid}${step === 'PRE' ? '' : `_${(step ?? 'ENHANCED').toLowerCase()}`}`)!;
  return { contentType, fileName };
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
