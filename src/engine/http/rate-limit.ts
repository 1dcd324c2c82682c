import { RATE_LIMIT_HEADERS, type EndpointId } from '../../contract/endpoints';

export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
  /**
   * For an allowed request that the route then refuses without serving anything: gives its place back,
   * and returns the headers as the count stands without it.
   */
  giveBack?: () => Record<string, string> | Promise<Record<string, string>>;
}

/** The rolling windows of the interface's rate limits: in this process (RateLimits) or shared through Redis. */
export interface RateLimiter {
  isLimited(endpoint: EndpointId): boolean;
  take(keyIndex: number, endpoint: EndpointId, forceReject?: boolean): RateDecision | Promise<RateDecision>;
  peek(keyIndex: number, endpoint: EndpointId): Record<string, string> | Promise<Record<string, string>>;
}

/**
 * Per key and per operation, a true rolling window (a sliding log of accepted requests): a request is
 * accepted when fewer than `limit` were accepted in the last `windowMs`. Rejected requests do not count.
 */
export class RateLimits implements RateLimiter {
  private readonly logs = new Map<string, number[]>();

  constructor(
    private readonly limits: Record<EndpointId, number | null>,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  isLimited(endpoint: EndpointId): boolean {
    return this.limits[endpoint] !== null;
  }

  /** Counts the request if there is room; the headers go on every answer of a limited operation. */
  take(keyIndex: number, endpoint: EndpointId, forceReject = false): RateDecision {
    const limit = this.limits[endpoint];
    if (limit === null) return { allowed: true, headers: {} };
    const now = this.now();
    const log = this.log(`${keyIndex}:${endpoint}`, now);
    if (forceReject || log.length >= limit) {
      const freeAt = log.length >= limit ? log[log.length - limit] + this.windowMs : now + 1000;
      return {
        allowed: false,
        headers: {
          ...this.headers(limit, limit),
          'retry-after': String(Math.max(1, Math.ceil((freeAt - now) / 1000))),
        },
      };
    }
    log.push(now);
    const giveBack = () => {
      const current = this.log(`${keyIndex}:${endpoint}`, this.now());
      const at = current.lastIndexOf(now);
      if (at >= 0) current.splice(at, 1);
      return this.headers(limit, current.length);
    };
    return { allowed: true, headers: this.headers(limit, log.length), giveBack };
  }

  /**
   * The headers as the count stands, without counting this request: for an answer refused before the
   * operation (a wrong key counts as one that has used nothing).
   */
  peek(keyIndex: number, endpoint: EndpointId): Record<string, string> {
    const limit = this.limits[endpoint];
    if (limit === null) return {};
    const used = keyIndex < 0 ? 0 : this.log(`${keyIndex}:${endpoint}`, this.now()).length;
    return this.headers(limit, Math.min(used, limit));
  }

  private log(id: string, now: number): number[] {
    let log = this.logs.get(id);
    if (!log) {
      log = [];
      this.logs.set(id, log);
    }
    let expired = 0;
    while (expired < log.length && log[expired] + this.windowMs <= now) expired++;
    if (expired > 0) log.splice(0, expired);
    return log;
  }

  private headers(limit: number, used: number): Record<string, string> {
    return rateLimitHeaders(limit, used, this.windowMs);
  }
}

/** The X-RateLimit-* headers of an answer, with `used` places of `limit` taken in the window. */
export function rateLimitHeaders(limit: number, used: number, windowMs: number): Record<string, string> {
  return {
    [RATE_LIMIT_HEADERS.limit]: String(limit),
    [RATE_LIMIT_HEADERS.remaining]: String(Math.max(0, limit - used)),
    [RATE_LIMIT_HEADERS.used]: String(used),
    [RATE_LIMIT_HEADERS.window]: String(windowMs / 1000),
  };
}
