import { once } from 'node:events';
import { createWriteStream, promises as fsp } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';
import type { FetchGuard } from './fetch-guard';
import { ProcessingError } from '../processors/processor';

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/**
 * What a caller is told for a target refused, unreachable or unknown: one reason for all, so the
 * outcome never tells which hosts and ports exist behind the engine. The engine's log has the cause.
 */
export const UNREACHABLE = 'file_download_url: the input URL could not be fetched';

export interface FetchOptions {
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal;
  guard: FetchGuard;
  /** The cause of a failure the caller is told only in general terms. */
  log(line: string): void;
}

/**
 * The background fetch of enhance-json: GET, at most 5 redirects followed here, each hop checked
 * again (http or https only, a host the guard allows), bounded in time and size. Any failure is a
 * ProcessingError saying why.
 */
export async function fetchInput(url: string, path: string, options: FetchOptions): Promise<void> {
  // One deadline for the whole fetch: a server dripping a byte now and then never trips the per-read timeouts.
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, deadline]);
  const timedOut = () =>
    new ProcessingError('FETCH_FAILED', `file_download_url: the fetch took longer than ${options.timeoutMs / 1000} s`);
  let target = url;
  for (let hop = 0; ; hop++) {
    const parsed = new URL(target);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new ProcessingError(
        'FETCH_FAILED',
        `file_download_url: ${hop === 0 ? 'the URL' : 'a redirect'} uses ${parsed.protocol}, only http and https are fetched`,
      );
    }
    const refused = options.guard.refuseHost(parsed.hostname);
    if (refused) {
      options.log(`refused to fetch ${parsed.origin}: ${refused}`);
      throw new ProcessingError('FETCH_FAILED', UNREACHABLE);
    }
    let res;
    try {
      res = await request(parsed, {
        method: 'GET',
        dispatcher: options.guard.dispatcher,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        signal,
      });
    } catch (err) {
      if (deadline.aborted) throw timedOut();
      options.log(`could not fetch ${parsed.origin}: ${(err as Error).message}`); // origin only: a path or query may hold a token
      throw new ProcessingError('FETCH_FAILED', UNREACHABLE);
    }
    const location = res.headers.location;
    if (REDIRECTS.has(res.statusCode) && typeof location === 'string') {
      await res.body.dump();
      if (hop >= MAX_REDIRECTS)
        throw new ProcessingError('FETCH_FAILED', `file_download_url: more than ${MAX_REDIRECTS} redirects`);
      target = new URL(location, parsed).href;
      continue;
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump();
      throw new ProcessingError('FETCH_FAILED', `file_download_url: the server answered HTTP ${res.statusCode}`);
    }
    let size = 0;
    const limit = new Transform({
      transform(chunk: Buffer, _enc, callback) {
        size += chunk.length;
        if (size > options.maxBytes)
          callback(
            new ProcessingError('FETCH_FAILED', `file_download_url: the file is larger than ${options.maxBytes} bytes`),
          );
        else callback(null, chunk);
      },
    });
    const file = createWriteStream(path, { mode: 0o600 });
    try {
      await pipeline(res.body, limit, file, { signal });
    } catch (err) {
      if (!file.closed) await once(file, 'close').catch(() => undefined); // removed only once closed
      await fsp.rm(path, { force: true });
      if (err instanceof ProcessingError) throw err;
      if (deadline.aborted) throw timedOut();
      throw new ProcessingError('FETCH_FAILED', `file_download_url: the download broke off: ${(err as Error).message}`);
    }
    return;
  }
}
