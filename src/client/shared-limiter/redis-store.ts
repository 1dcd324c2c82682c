import { createHash, randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { ACQUIRE_SCRIPT, OBSERVE_SCRIPT, RENEW_SCRIPT, SETTLE_SCRIPT } from './scripts';

/** How to reach the Redis that instances sharing a key share their limits through. */
export interface SharedLimiterOptions {
  /** `redis://[user[:password]@]host[:port][/db]` or `rediss://` (TLS). */
  redisUrl: string;
  /** Password, when not in the URL (kept apart so it can be stored as a secret). */
  password?: string;
  /** Prefix of every Redis key of the limiter. Default `media-enhance`. */
  keyPrefix?: string;
  /** Longest wait for one answer of Redis before a call falls back to the local limiter. Default 500 ms. */
  timeoutMs?: number;
  /** Told when sharing stops (Redis unreachable or slow) and when it resumes. */
  onStateChange?: (state: SharingState) => void;
}

/** `shared`: the limits are shared through Redis; `unreachable`: each call uses the local limiter. */
export type SharingState = 'shared' | 'unreachable';

export interface AcquireAnswer {
  taken: boolean;
  /** Places in the window, this one included when taken. */
  used: number;
  /** When not taken: milliseconds until the next place frees; undefined when only an answer under way can free it. */
  waitMs?: number;
}

/** The calls of the scripts, as ioredis defines them on the connection. */
interface ScriptCommands {
  meAcquire(key: string, limit: number, windowMs: number, leaseMs: number, member: string): Promise<number[]>;
  meSettle(key: string, member: string): Promise<number>;
  meRenew(key: string, leaseMs: number, ...members: string[]): Promise<number>;
  meObserve(
    key: string,
    serverUsed: number,
    windowMs: number,
    retryAfterMs: number,
    prefix: string,
    leaseMs: number,
    limit: number,
  ): Promise<number>;
}

/** A Redis answer did not come in time. */
export class RedisTimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer within ${ms} ms`);
  }
}

/**
 * The windows of one API key in Redis: one sorted set per operation, named by a hash of the key (never
 * the key itself). Every call is bounded in time: a call that finds Redis down fails at once (no offline
 * queue to replay stale calls later), one that finds it slow fails after `timeoutMs`.
 */
export class RedisWindowStore {
  readonly timeoutMs: number;
  private readonly redis: Redis;
  private readonly scripts: ScriptCommands;
  private readonly keyBase: string;
  /** Tells this instance's places apart from every other's. */
  private readonly instanceId = randomBytes(6).toString('hex');
  private sequence = 0;

  constructor(options: SharedLimiterOptions, apiKey: string) {
    this.timeoutMs = options.timeoutMs ?? 500;
    const keyHash = createHash('sha256').update(apiKey).digest('hex').slice(0, 32);
    this.keyBase = `${options.keyPrefix || 'media-enhance'}:limits:${keyHash}`;
    this.redis = new Redis(options.redisUrl, {
      ...(options.password ? { password: options.password } : {}),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: Math.max(1000, this.timeoutMs),
      // Keep trying to reconnect, at most every 2 s: sharing resumes by itself once Redis is back.
      retryStrategy: (times) => Math.min(100 * times, 2000),
      lazyConnect: false,
    });
    // Errors surface as failed calls (and the limiter falls back); an unhandled 'error' event would crash.
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('meAcquire', { numberOfKeys: 1, lua: ACQUIRE_SCRIPT });
    this.redis.defineCommand('meSettle', { numberOfKeys: 1, lua: SETTLE_SCRIPT });
    this.redis.defineCommand('meRenew', { numberOfKeys: 1, lua: RENEW_SCRIPT });
    this.redis.defineCommand('meObserve', { numberOfKeys: 1, lua: OBSERVE_SCRIPT });
    this.scripts = this.redis as unknown as ScriptCommands;
  }

  /** Resolves true once connected, false if not within `ms`. */
  async ready(ms: number): Promise<boolean> {
    if (this.redis.status === 'ready') return true;
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      // The connection attempt, not this wait, decides whether the process stays alive.
      timer.unref();
      this.redis.on('ready', onReady);
    });
  }

  /** A name for a new place, unique among every instance. */
  newMember(): string {
    return `${this.instanceId}:${++this.sequence}`;
  }

  async acquire(endpoint: string, limit: number, windowMs: number, member: string): Promise<AcquireAnswer> {
    const [taken, used, waitMs] = await this.bounded(
      this.scripts.meAcquire(this.key(endpoint), limit, windowMs, LEASE_MS, member),
    );
    return { taken: taken === 1, used, waitMs: waitMs < 0 ? undefined : waitMs };
  }

  /** The request was answered: its place counts from now (Redis time). */
  async settle(endpoint: string, member: string): Promise<void> {
    await this.bounded(this.scripts.meSettle(this.key(endpoint), member));
  }

  /** Places of requests still under way stay held for another LEASE_MS. */
  async renew(endpoint: string, members: string[]): Promise<void> {
    if (members.length === 0) return;
    await this.bounded(this.scripts.meRenew(this.key(endpoint), LEASE_MS, ...members));
  }

  /** Gives a place back (the request never reached the service, or met a 429). */
  async release(endpoint: string, members: string[]): Promise<void> {
    if (members.length === 0) return;
    await this.bounded(this.redis.zrem(this.key(endpoint), ...members));
  }

  /**
   * The service counted `serverUsed`: Redis learns of the places taken by clients that do not share,
   * up to `limit` places in the window.
   */
  async observe(
    endpoint: string,
    serverUsed: number,
    limit: number,
    windowMs: number,
    retryAfterMs?: number,
  ): Promise<number> {
    return this.bounded(
      this.scripts.meObserve(
        this.key(endpoint),
        serverUsed,
        windowMs,
        retryAfterMs ?? -1,
        `${this.newMember()}:seen:`,
        LEASE_MS,
        limit,
      ),
    );
  }

  async ping(): Promise<void> {
    await this.bounded(this.redis.ping());
  }

  async close(): Promise<void> {
    try {
      await this.bounded(this.redis.quit());
    } catch {
      // Already gone or unreachable: drop the connection.
    }
    this.redis.disconnect();
  }

  private key(endpoint: string): string {
    return `${this.keyBase}:${endpoint}`;
  }

  private bounded<T>(call: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RedisTimeoutError(this.timeoutMs)), this.timeoutMs);
    });
    // The call may still settle after the timeout: nothing must wait for it or report it.
    call.catch(() => undefined);
    return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
  }
}

/** How often the places of requests under way are renewed. */
export const RENEW_EVERY_MS = 10_000;

/**
 * How long the place of a request under way stays held without a renewal: three renewals, so the
 * places of an instance that died mid-request come back within half a minute.
 */
export const LEASE_MS = 3 * RENEW_EVERY_MS;
