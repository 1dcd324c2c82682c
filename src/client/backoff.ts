// Exponential backoff with full jitter (a random wait between 0 and the exponential ceiling),
// so clients that failed together do not retry together.

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /**
   * How long a service that refuses connections (ECONNREFUSED: restarting, briefly down) is tried again,
   * however many attempts that takes: such a request never reached it, so sending it again is always safe.
   */
  unreachableForMs: number;
  /** Ceiling of the first retry's wait. */
  baseDelayMs: number;
  /** Largest ceiling, however many retries. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 4,
  unreachableForMs: 60_000,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
};

export function fullJitterDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.ceil(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
