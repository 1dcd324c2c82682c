import { STEPS } from '../../contract/fields';
import { METADATA_WAIT_PARAM } from '../../contract/metadata-wait';

/** One request as the access log records it: never a header, never a key, never a query value. */
export interface AccessLogEntry {
  /** When the request arrived (ms since the epoch): the moment the rate limiter counts. */
  at: number;
  method: string;
  /** The path, with a query reduced to what is safe to keep (see loggedPath below). */
  path: string;
  /** The status answered; 499 when the client left before any answer was sent. */
  status: number;
  /** True when the answer was not sent whole: the client left, or the connection was cut. */
  aborted: boolean;
  ms: number;
}

/**
 * `2026-11-22T10:00:00.000Z POST /v2/medias 201 12.5ms`, stamped with the time the request arrived;
 * ` aborted` ends the line of an answer that was not sent whole. Never a header, so never a key.
 */
export function accessLogLine(entry: AccessLogEntry): string {
  return `${new Date(entry.at).toISOString()} ${entry.method} ${entry.path} ${entry.status} ${entry.ms}ms${entry.aborted ? ' aborted' : ''}`;
}

/**
 * The request's path as the log keeps it. A query is the caller's to fill (a key put in `?api_key=`
 * must not land in the log): only a valid `step` and a wait of digits are kept, anything else becomes `…`.
 */
export function loggedPath(url: URL): string {
  if (!url.search) return url.pathname;
  const kept: string[] = [];
  let dropped = false;
  for (const [name, value] of url.searchParams) {
    if (name === 'step' && (STEPS as readonly string[]).includes(value)) kept.push(`step=${value}`);
    else if (name === METADATA_WAIT_PARAM && /^\d{1,4}$/.test(value)) kept.push(`${name}=${value}`);
    else dropped = true;
  }
  if (dropped) kept.push('…');
  return `${url.pathname}?${kept.join('&')}`;
}
