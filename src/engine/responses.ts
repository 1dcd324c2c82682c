import type { ServerResponse } from 'node:http';
import type { FieldIssue } from '../contract/fields';

/** An answer the routes decide on; the server writes it (and applies faults on the way). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | FieldIssue[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : 'validation error');
  }
}

export function unprocessable(issues: FieldIssue[]): HttpError {
  // The FastAPI shape: {loc, msg, type}; the offending input is kept for readable client errors.
  return new HttpError(422, issues);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  sendJson(res, error.status, { detail: error.detail }, error.headers);
}
