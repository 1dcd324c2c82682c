import { describeIssue, type FieldIssue } from '../contract/field-issue';

export type MediaEnhanceErrorCode =
  | 'VALIDATION'
  | 'AUTH'
  | 'NOT_FOUND'
  | 'NOT_READY'
  | 'RATE_LIMITED'
  | 'TOO_LARGE'
  | 'UNSUPPORTED'
  | 'JOB_FAILED'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'NETWORK'
  | 'HTTP'
  /** A local file could not be read or written (EISDIR, ENAMETOOLONG, EACCES, ENOSPC, a name taken...). */
  | 'FILE';

export interface MediaEnhanceErrorInit {
  status?: number;
  /** Readable `field: message` lines (from a 422 detail array or the client's own validation). */
  details?: string[];
  /** The media this error concerns, when there is one. */
  mediaUid?: string;
  /** Whether the same request may succeed if sent again later. */
  retryable?: boolean;
  cause?: unknown;
}

/** The one error class of the client. `message` and `details` never contain the API key. */
export class MediaEnhanceError extends Error {
  override readonly name = 'MediaEnhanceError';
  readonly code: MediaEnhanceErrorCode;
  readonly status?: number;
  readonly details: string[];
  readonly mediaUid?: string;
  readonly retryable: boolean;

  constructor(code: MediaEnhanceErrorCode, message: string, init: MediaEnhanceErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = code;
    this.status = init.status;
    this.details = init.details ?? [];
    this.mediaUid = init.mediaUid;
    this.retryable = init.retryable ?? false;
  }

  /**
   * The message alone: Node-RED shows `toString()` as `msg.error.message` and in the debug sidebar, where
   * the class name would push the reason out of sight.
   */
  override toString(): string {
    return this.message;
  }
}

/** The client's own validation failed: nothing was sent. */
export function validationError(operation: string, issues: FieldIssue[]): MediaEnhanceError {
  const details = issues.map(describeIssue);
  return new MediaEnhanceError('VALIDATION', `${details.join('; ')} (${operation}: nothing was sent)`, { details });
}

/**
 * A local file error (Node's `EACCES: permission denied, open '...'` and the like) as code FILE: the
 * caller's disk or path, not the service, is what to fix. `what` says what was being done with which file.
 */
export function fileError(err: unknown, what: string, mediaUid?: string): MediaEnhanceError {
  if (err instanceof MediaEnhanceError) return err;
  const reason = (err as Error)?.message ?? String(err);
  return new MediaEnhanceError('FILE', `${reason} (${what})`, { mediaUid, cause: err });
}

const CODE_BY_STATUS: Record<number, MediaEnhanceErrorCode> = {
  401: 'AUTH',
  403: 'AUTH',
  404: 'NOT_FOUND',
  412: 'NOT_READY',
  413: 'TOO_LARGE',
  415: 'UNSUPPORTED',
  422: 'VALIDATION',
  429: 'RATE_LIMITED',
};

export const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504, 507]);

/** Answers that say the service did nothing and may later: a POST is safe to send again after them. */
export const REFUSED_FOR_NOW_STATUSES = new Set([429, 503, 507]);

const EXCERPT_CHARS = 300;

/**
 * Turns an error response into a MediaEnhanceError. The body may be the interface's `{detail: string}`,
 * the FastAPI `{detail: [{loc, msg, type}]}`, or anything else (then a bounded excerpt is kept).
 */
export function errorFromResponse(
  what: string,
  status: number,
  bodyText: string,
  mediaUid?: string,
): MediaEnhanceError {
  const code = CODE_BY_STATUS[status] ?? 'HTTP';
  const details = detailLines(bodyText);
  const summary = details.length > 0 ? details.join('; ') : excerpt(bodyText);
  // The reason a person can act on comes first; the request and the status follow in brackets.
  const message = `${summary || `the service answered HTTP ${status}`}${hint(code)} (${what}: HTTP ${status})`;
  return new MediaEnhanceError(code, message, { status, details, mediaUid, retryable: RETRYABLE_STATUSES.has(status) });
}

function detailLines(bodyText: string): string[] {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return [];
  }
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return [detail];
  if (Array.isArray(detail))
    return (detail as unknown[]).map((d) => (typeof d === 'object' && d !== null ? describeIssue(d) : String(d)));
  return [];
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}...` : flat;
}

function hint(code: MediaEnhanceErrorCode): string {
  if (code === 'AUTH') return ' (check the API key of the configuration)';
  return '';
}

/** Replaces every occurrence of the key in a text; applied to everything the client reports. */
export function redact(text: string, apiKey: string): string {
  return apiKey.length > 0 ? text.split(apiKey).join('[redacted]') : text;
}

/** Strips the key from an error's message and details, whatever produced it. */
export function redactError<E>(err: E, apiKey: string): E {
  if (err instanceof Error && apiKey) {
    err.message = redact(err.message, apiKey);
    if (err.stack) err.stack = redact(err.stack, apiKey);
  }
  if (err instanceof MediaEnhanceError) {
    (err as { details: string[] }).details = err.details.map((d) => redact(d, apiKey));
  }
  return err;
}
