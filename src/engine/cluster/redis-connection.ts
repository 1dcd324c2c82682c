// The engine's connections to the Redis its instances share, and how a failed call is answered.
import Redis, { type RedisOptions } from 'ioredis';
import { unavailable } from '../http/health';

/** Prefix of every key the engine keeps in Redis (the client's shared limiter uses `media-enhance:limits`). */
export const KEY_PREFIX = 'media-enhance:engine';

/** What a caller is told is away (never the address: it may carry a password). */
export const REDIS_PART = 'shared state (Redis)';

/**
 * A connection for the engine's own calls: a call made while Redis is away fails at once (no offline
 * queue replaying stale writes later) and one Redis does not answer fails after COMMAND_TIMEOUT_MS;
 * reconnection goes on in the background, every 2 s at most, so the instance recovers by itself.
 */
export function commandConnection(url: string, extra: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    commandTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: (times) => Math.min(100 * times, 2000),
    ...extra,
  });
  // Failures surface as failed calls (answered 503); an unhandled 'error' event would end the process.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * A connection for BullMQ's workers, which block waiting for jobs and must never give a call up
 * (BullMQ requires `maxRetriesPerRequest: null`); it reconnects on its own like the others.
 */
export function queueConnection(url: string): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(100 * times, 2000),
  });
  redis.on('error', () => undefined);
  return redis;
}

const COMMAND_TIMEOUT_MS = 3000;

/**
 * The call's answer; when Redis is away, does not answer or refuses writes at its memory limit (OOM),
 * a 503 with Retry-After instead of a 500
 * (what a load balancer and the client retry). Any other error (a script's) is what it is.
 */
export async function shared<T>(redis: Redis, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (redis.status !== 'ready' || isRedisAway(err)) throw unavailable(REDIS_PART);
    throw err;
  }
}

/** Redis is away, or cannot take the call now: at its memory limit (OOM), loading, read-only. */
export function isRedisAway(err: unknown): boolean {
  const message = (err as Error)?.message ?? '';
  // A transaction Redis discarded (EXECABORT) is away for the reason of the step it refused.
  const previous = (err as { previousErrors?: unknown[] })?.previousErrors;
  if (Array.isArray(previous) && previous.some(isRedisAway)) return true;
  return (
    /connection|closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|timed out|offline queue|writeable|LOADING|max retries/i.test(
      message,
    ) || /\b(OOM|READONLY|MISCONF|BUSY)\b/.test(message)
  );
}

/** Resolves once the connection is ready, rejects if not within `ms`. */
export function connected(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`redis: no connection within ${ms / 1000} s`));
    }, ms);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}
