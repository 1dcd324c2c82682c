import type { ServerResponse } from 'node:http';
import type { FieldIssue } from '../../contract/field-issue';
import { isDiskFull } from '../../audio/write-fully';
import { excerpt } from '../../contract/excerpt';
import type { PartUnavailableError } from '../part-unavailable';

/** An answer the routes decide on; the server writes it (and applies faults on the way). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | FieldIssue[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : 'validation error');
  }

  /** The same answer with more headers (those of the rate limit, say). */
  withHeaders(headers: Record<string, string>): HttpError {
    return new HttpError(this.status, this.detail, { ...headers, ...this.headers });
  }
}

export function unprocessable(issues: FieldIssue[]): HttpError {
  // The FastAPI shape: {loc, msg, type}; the offending input is kept for readable client errors, but
  // only a short excerpt of it: the answer must stay small and safe to write whatever was sent.
  return new HttpError(
    422,
    issues.map((issue) =>
      'input' in issue
        ? { ...issue, loc: issue.loc.map((part) => excerpt(part) as string | number), input: excerpt(issue.input) }
        : issue,
    ),
  );
}

export { isDiskFull };

/** How long a caller should wait before sending an upload again to a full disk. */
const DISK_FULL_RETRY_AFTER_S = 60;

export function insufficientStorage(): HttpError {
  return new HttpError(507, 'the service has no room left to store this upload (its disk is full); retry later', {
    'retry-after': String(DISK_FULL_RETRY_AFTER_S),
    connection: 'close',
  });
}

/** A part the engine needs (the storage, the shared state) does not answer: the caller tries again later. */
export function partUnavailable(err: PartUnavailableError): HttpError {
  return new HttpError(503, err.detail, { 'retry-after': String(err.retryAfterS) });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  sendJson(res, error.status, { detail: error.detail }, error.headers);
}

/**
 * Writes an error answer and never throws: if the answer cannot be written (whatever the reason), the
 * request ends with a bare 500, or its connection is destroyed when even that cannot be sent. The
 * reason goes to `log`.
 */
export function sendErrorSafely(res: ServerResponse, error: HttpError, log: (line: string) => void): void {
  try {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(res, error);
  } catch (err) {
    try {
      log(`could not write a ${error.status} answer: ${(err as Error)?.message ?? String(err)}`);
    } catch {
      // a log that throws must not stop the answer
    }
    try {
      if (res.headersSent) {
        res.destroy();
      } else {
        res.writeHead(500, { 'content-type': 'text/plain', 'content-length': '14', connection: 'close' });
        res.end('internal error');
      }
    } catch {
      res.destroy();
    }
  }
}
