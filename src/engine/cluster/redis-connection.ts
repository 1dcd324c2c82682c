// The engine's connections to the Redis its instances share, and how a failed call is answered.
import Redis, { ReplyError, type RedisOptions } from 'ioredis';
import { PartUnavailableError, UNAVAILABLE_RETRY_AFTER_S } from '../part-unavailable';

/** Prefix of every key the engine keeps in Redis (the client's shared limiter uses `media-enhance:limits`). */
export const KEY_PREFIX = 'media-enhance:engine';

/** What a caller is told is away (never the address: it may carry a password). */
export const REDIS_PART = 'shared state (Redis)';

/** Redis is away or does not answer: the server answers 503 with Retry-After (what a load balancer and the client retry). */
export class SharedStateUnavailableError extends PartUnavailableError {
  constructor() {
    const message = `the service cannot reach its ${REDIS_PART} now; retry later`;
    super(message, message, UNAVAILABLE_RETRY_AFTER_S);
    this.name = 'SharedStateUnavailableError';
  }
}

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
  // Failures surface as failed calls (SharedStateUnavailableError); an unhandled 'error' event would end the process.
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
 * The call's answer; when Redis is away or does not answer, a SharedStateUnavailableError instead of the
 * error as it came. Any other error (a script's) is what it is.
 */
export async function shared<T>(redis: Pick<Redis, 'status'>, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (redis.status !== 'ready' || isOutage(err)) throw new SharedStateUnavailableError();
    throw err;
  }
}

/**
 * Redis's error codes (the first word of an error reply) that say it cannot serve now, not that the call
 * was wrong: loading its data, at its memory limit (OOM: it refuses every write until memory is freed),
 * read-only, unable to persist, busy with a script.
 */
const UNAVAILABLE_REPLIES = new Set(['LOADING', 'OOM', 'READONLY', 'MISCONF', 'BUSY', 'MASTERDOWN']);

/** A fault in the code itself, never an outage. */
const PROGRAM_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError];

/**
 * Whether a call failed for want of an answer. Told by the error's class, not its words: Redis's own answer
 * is a ReplyError (an outage only when its code says Redis cannot serve now); anything else ioredis rejects
 * with (closed, not writable, timed out, out of retries, a socket error) means no answer came.
 */
export function isOutage(err: unknown): boolean {
  if (err instanceof ReplyError) {
    // A transaction Redis discarded (EXECABORT) failed for the reason of the step it refused.
    const previous = (err as { previousErrors?: unknown[] }).previousErrors;
    if (Array.isArray(previous) && previous.some(isOutage)) return true;
    return UNAVAILABLE_REPLIES.has(String((err as Error).message).split(' ')[0]);
  }
  return err instanceof Error && !PROGRAM_ERRORS.some((kind) => err instanceof kind);
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
