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
  /**
   * Told when sharing stops (Redis unreachable, slow, or answering what the limiter's scripts do not:
   * `reason` says which) and when it resumes.
   */
  onStateChange?: (state: SharingState, reason?: string) => void;
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

/** A Redis answer did not come in time: the connection is dropped (a reply still arriving is never read). */
export class RedisTimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer within ${ms} ms`);
  }
}

/** Redis answered, but not as the limiter's scripts answer (a proxy, another server, a broken Redis). */
export class RedisAnswerError extends Error {}

/**
 * Most bytes Redis may send while a call waits for its answer. The limiter's answers are a few numbers
 * (the connection's ready check reads INFO, a few KiB): more is not Redis answering the limiter, and its
 * connection is dropped before the reply can fill the memory. ioredis has no bound of its own on a reply.
 */
export const MAX_REDIS_REPLY_BYTES = 64 * 1024;

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
  /** Bytes Redis sent on this connection since a call last had its answer. */
  private unansweredBytes = 0;
  /** Why the connection was dropped last: what the calls it cut off report. */
  private dropReason: Error | undefined;

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
    this.redis.on('connect', () => this.watchReplySize());
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
    const answer = await this.bounded(this.scripts.meAcquire(this.key(endpoint), limit, windowMs, LEASE_MS, member));
    const [taken, used, waitMs] = expect(
      'taking a place',
      answer,
      (a): a is number[] =>
        Array.isArray(a) &&
        a.length === 3 &&
        a.every((n) => Number.isInteger(n)) &&
        (a[0] === 0 || a[0] === 1) &&
        a[1] >= 0 &&
        a[2] >= -1,
      'three whole numbers',
    );
    return { taken: taken === 1, used, waitMs: waitMs < 0 ? undefined : waitMs };
  }

  /** The request was answered: its place counts from now (Redis time). */
  async settle(endpoint: string, member: string): Promise<void> {
    expect('settling a place', await this.bounded(this.scripts.meSettle(this.key(endpoint), member)), isOne, '1');
  }

  /** Places of requests still under way stay held for another LEASE_MS. */
  async renew(endpoint: string, members: string[]): Promise<void> {
    if (members.length === 0) return;
    const answer = await this.bounded(this.scripts.meRenew(this.key(endpoint), LEASE_MS, ...members));
    expect('renewing places', answer, isOne, '1');
  }

  /** Gives a place back (the request never reached the service, or met a 429). */
  async release(endpoint: string, members: string[]): Promise<void> {
    if (members.length === 0) return;
    const answer = await this.bounded(this.redis.zrem(this.key(endpoint), ...members));
    expect('giving places back', answer, isCount, 'a count');
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
    const answer = await this.bounded(
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
    return expect("counting the service's places", answer, isCount, 'a count');
  }

  /** Redis answers, and runs the limiter's scripts as they should (a settle of no place changes nothing). */
  async ping(): Promise<void> {
    expect('PING', await this.bounded(this.redis.ping()), (a): a is string => a === 'PONG', 'PONG');
    await this.settle('probe', 'none');
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

  /**
   * The call's answer within `timeoutMs`. On a timeout the connection is dropped, not only the call:
   * a reply still arriving (however long) is never read, and ioredis connects again for the next call.
   */
  private bounded<T>(call: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new RedisTimeoutError(this.timeoutMs);
        this.drop(error);
        reject(error);
      }, this.timeoutMs);
    });
    // The call may still settle after the timeout: nothing must wait for it or report it.
    call.catch(() => undefined);
    const answered = call.then(
      (answer) => {
        this.unansweredBytes = 0;
        return answer;
      },
      (err: unknown) => {
        // A call cut off by a dropped connection says why the connection was dropped.
        throw this.dropReason && this.redis.status !== 'ready' ? this.dropReason : err;
      },
    );
    return Promise.race([answered, timeout]).finally(() => clearTimeout(timer));
  }

  /** Counts what Redis sends on a new connection, and drops it once a reply grows past its bound. */
  private watchReplySize(): void {
    const stream = this.redis.stream;
    this.unansweredBytes = 0;
    this.dropReason = undefined;
    stream.on('data', (chunk: Buffer) => {
      if (stream !== this.redis.stream) return;
      this.unansweredBytes += chunk.length;
      if (this.unansweredBytes > MAX_REDIS_REPLY_BYTES) {
        this.drop(
          new RedisAnswerError(
            `Redis sent more than ${MAX_REDIS_REPLY_BYTES / 1024} KiB without answering the limiter; the connection was dropped`,
          ),
        );
      }
    });
  }

  /** Closes the connection (ioredis connects again for the next call, as after any outage). */
  private drop(reason: Error): void {
    this.dropReason = reason;
    this.unansweredBytes = 0;
    this.redis.stream?.destroy();
  }
}

function isOne(answer: unknown): answer is 1 {
  return answer === 1;
}

function isCount(answer: unknown): answer is number {
  return Number.isInteger(answer) && (answer as number) >= 0;
}

/** The answer when it has the shape the limiter's script gives; a RedisAnswerError naming both when not. */
function expect<T>(what: string, answer: unknown, shape: (a: unknown) => a is T, expected: string): T {
  if (shape(answer)) return answer;
  const got = JSON.stringify(answer) ?? String(answer);
  throw new RedisAnswerError(
    `Redis answered ${what} with ${got.length > 60 ? `${got.slice(0, 60)}...` : got}, not ${expected}: not the limiter's script`,
  );
}

/** How often the places of requests under way are renewed. */
export const RENEW_EVERY_MS = 10_000;

/**
 * How long the place of a request under way stays held without a renewal: three renewals, so the
 * places of an instance that died mid-request come back within half a minute.
 */
export const LEASE_MS = 3 * RENEW_EVERY_MS;
