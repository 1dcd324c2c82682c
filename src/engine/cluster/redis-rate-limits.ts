// The interface's rolling-window rate limits counted across every instance: one sliding log per key and
// operation in Redis, with the scripts the client's shared limiter uses (contract/sliding-log-scripts).
import { createHash, randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import type { EndpointId } from '../../contract/endpoints';
import { ACQUIRE_SCRIPT, COUNT_SCRIPT, SETTLE_SCRIPT } from '../../contract/sliding-log-scripts';
import { rateLimitHeaders, type RateDecision, type RateLimiter } from '../http/rate-limit';
import { KEY_PREFIX, shared } from './redis-connection';

/** A taken place is settled in the same round trip; the lease only bounds a place whose settle never ran. */
const LEASE_MS = 10_000;

interface ScriptCommands {
  meAcquire(key: string, limit: number, windowMs: number, leaseMs: number, member: string): Promise<number[]>;
  meSettle(key: string, member: string): Promise<number>;
  meCount(key: string, windowMs: number): Promise<number>;
}

export class RedisRateLimits implements RateLimiter {
  private readonly scripts: ScriptCommands;
  /** Per accepted key (by index): its window's name, from a hash of the key, never the key itself. */
  private readonly keyNames: string[];
  private readonly instanceId = randomBytes(6).toString('hex');
  private sequence = 0;

  constructor(
    private readonly redis: Redis,
    apiKeys: string[],
    private readonly limits: Record<EndpointId, number | null>,
    private readonly windowMs: number,
  ) {
    this.keyNames = apiKeys.map((key) => createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 32));
    redis.defineCommand('meAcquire', { numberOfKeys: 1, lua: ACQUIRE_SCRIPT });
    redis.defineCommand('meSettle', { numberOfKeys: 1, lua: SETTLE_SCRIPT });
    redis.defineCommand('meCount', { numberOfKeys: 1, lua: COUNT_SCRIPT });
    this.scripts = redis as unknown as ScriptCommands;
  }

  isLimited(endpoint: EndpointId): boolean {
    return this.limits[endpoint] !== null;
  }

  async take(keyIndex: number, endpoint: EndpointId, forceReject = false): Promise<RateDecision> {
    const limit = this.limits[endpoint];
    if (limit === null) return { allowed: true, headers: {} };
    const window = this.window(keyIndex, endpoint);
    if (forceReject) {
      return { allowed: false, headers: { ...rateLimitHeaders(limit, limit, this.windowMs), 'retry-after': '1' } };
    }
    const member = `${this.instanceId}:${++this.sequence}`;
    // Taken and settled (counting from now, Redis time) in one round trip: the scripts run in order.
    const answers = await shared(this.redis, () =>
      this.redis.pipeline().meAcquire(window, limit, this.windowMs, LEASE_MS, member).meSettle(window, member).exec(),
    );
    const [err, taken] = answers?.[0] ?? [new Error('redis: no answer')];
    if (err) throw err;
    const [ok, used, waitMs] = taken as number[];
    if (ok !== 1) {
      const wait = waitMs < 0 ? this.windowMs : waitMs;
      return {
        allowed: false,
        headers: {
          ...rateLimitHeaders(limit, limit, this.windowMs),
          'retry-after': String(Math.max(1, Math.ceil(wait / 1000))),
        },
      };
    }
    const giveBack = async () => {
      await shared(this.redis, () => this.redis.zrem(window, member));
      return rateLimitHeaders(limit, await this.count(window), this.windowMs);
    };
    return { allowed: true, headers: rateLimitHeaders(limit, used, this.windowMs), giveBack };
  }

  async peek(keyIndex: number, endpoint: EndpointId): Promise<Record<string, string>> {
    const limit = this.limits[endpoint];
    if (limit === null) return {};
    const used = keyIndex < 0 ? 0 : await this.count(this.window(keyIndex, endpoint));
    return rateLimitHeaders(limit, Math.min(used, limit), this.windowMs);
  }

  private count(window: string): Promise<number> {
    return shared(this.redis, () => this.scripts.meCount(window, this.windowMs));
  }

  private window(keyIndex: number, endpoint: EndpointId): string {
    return `${KEY_PREFIX}:limits:${this.keyNames[keyIndex]}:${endpoint}`;
  }
}

declare module 'ioredis' {
  interface ChainableCommander {
    meAcquire(key: string, limit: number, windowMs: number, leaseMs: number, member: string): ChainableCommander;
    meSettle(key: string, member: string): ChainableCommander;
  }
}
