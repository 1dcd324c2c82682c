// The service's X-RateLimit-* headers, read as numbers only when they are sane. A count is a whole
// number from 0 to MAX_RATE_LIMIT_COUNT; anything else (a fraction, a negative, "1e9", an absurd count)
// is ignored as if absent: the limiters insert one entry per counted request, locally and in Redis, so
// an unbounded count from one answer would cost memory and block a shared Redis for everyone.
import { RATE_LIMIT_HEADERS } from '../contract/endpoints';

/** Response headers as Node and undici give them: a name's value, several values, or none. */
export type HeaderBag = Record<string, string | string[] | undefined>;

/** Largest request count (limit, used, remaining) believed from a header: far above any real window. */
export const MAX_RATE_LIMIT_COUNT = 100_000;

/** Longest window believed from `X-RateLimit-Window`, in seconds (a day). */
export const MAX_RATE_LIMIT_WINDOW_S = 86_400;

function text(headers: HeaderBag, name: string): string | undefined {
  const raw = headers[name];
  return Array.isArray(raw) ? raw[0] : raw;
}

/** A request count from a header: a whole number within bounds, else undefined. */
export function countHeader(headers: HeaderBag, name: string): number | undefined {
  const value = text(headers, name)?.trim();
  if (value === undefined || !/^\d{1,9}$/.test(value)) return undefined;
  const count = Number(value);
  return count <= MAX_RATE_LIMIT_COUNT ? count : undefined;
}

/** `X-RateLimit-Window` in seconds: a positive number up to a day, else undefined. */
export function windowHeader(headers: HeaderBag): number | undefined {
  const value = text(headers, RATE_LIMIT_HEADERS.window)?.trim();
  if (value === undefined || !/^\d{1,9}(\.\d{1,6})?$/.test(value)) return undefined;
  const seconds = Number(value);
  return seconds > 0 && seconds <= MAX_RATE_LIMIT_WINDOW_S ? seconds : undefined;
}

/** What the service counts in the window: `X-RateLimit-Used`, else `Limit - Remaining`; undefined when not sane. */
export function serverUsedHeader(headers: HeaderBag): number | undefined {
  const used = countHeader(headers, RATE_LIMIT_HEADERS.used);
  if (used !== undefined) return used;
  const limit = countHeader(headers, RATE_LIMIT_HEADERS.limit);
  const remaining = countHeader(headers, RATE_LIMIT_HEADERS.remaining);
  return limit !== undefined && remaining !== undefined && remaining <= limit ? limit - remaining : undefined;
}
