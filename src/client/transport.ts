import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import type { EndpointId } from '../contract/endpoints';
import { parseRetryAfter, type RetryPolicy } from './backoff';
import { sleep, type Clock } from './clock';
import { ConnectionGate } from './connection-gate';
import { MediaEnhanceError, errorFromResponse, redactError } from './errors';
import type { RateLimitLog } from './limit-state';
import type { Slot, WindowLimiter } from './rate-limiter';
import { MAX_HELD_POLLS } from './status-poller';
import { NOT_SENT_CODES, REFUSED_CODE, decideRetry, type RequestFailure } from './retry-decision';

/** What a caller is told while its request waits: for a place in the window, or before a retry. */
export interface WaitEvent {
  endpoint: EndpointId;
  reason: 'queued' | 'rate-limited' | 'retry';
  /** Estimated milliseconds until the request is sent. */
  waitMs: number;
  /** Place in line, for `queued`. */
  position?: number;
  /** The retry about to be made (1 for the first), for `rate-limited` and `retry`. */
  attempt?: number;
  /** Why a retry is needed, for `retry`. */
  cause?: string;
}

export interface RequestBody {
  body: Buffer | string | Readable;
  headers: Record<string, string>;
}

export interface RequestSpec {
  endpoint: EndpointId;
  method: 'GET' | 'POST';
  /** Path and query, relative to the base URL. */
  path: string;
  headers?: Record<string, string>;
  /** Builds the body for each attempt (a stream cannot be read twice). */
  body?: () => RequestBody | Promise<RequestBody>;
  /** False when the body comes from a one-shot stream that cannot be sent again. */
  replayable?: boolean;
  signal?: AbortSignal;
  onWait?: (event: WaitEvent) => void;
  /** A place already taken in the endpoint's window (the status poller takes its own). */
  slot?: Slot;
  /** Overrides the policy's retry count (the poller does its own retrying). */
  maxRetries?: number;
  mediaUid?: string;
  /** An answer outside 2xx that the caller reads itself instead of it becoming an error. */
  readsAnswer?: (res: Response) => boolean;
  /** The service holds this answer (a waiting metadata request): sent on connections of its own. */
  held?: boolean;
}

export interface Response {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
}

const MAX_REDIRECTS = 5;
export const BODY_HIGH_WATER_MARK = 1024 * 1024;
const ERROR_BODY_LIMIT = 64 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface TransportConfig {
  origin: string;
  base: string;
  apiKey: string;
  requestTimeoutMs: number;
  /** Connections open at once to one origin; as many requests with a body are sent at once. */
  maxConnections: number;
  retry: RetryPolicy;
  clock: Clock;
  random: () => number;
  limiterFor(endpoint: EndpointId): WindowLimiter;
  /** Told of every 429 answer and of each wait before a call is sent again after one. */
  rateLimits?: RateLimitLog;
}

/**
 * Sends requests for one client: waits for a place in the endpoint's window, sends the key only to the
 * configured origin, follows redirects of GETs, and retries what is safe to retry with full-jitter backoff.
 */
export class Transport {
  private readonly agent: Agent;
  /** Connections for answers the service holds, so they never keep a transfer waiting for a connection. */
  private readonly heldAgent: Agent;
  private readonly bodies: ConnectionGate;

  constructor(private readonly config: TransportConfig) {
    // A pool per origin: requests beyond `maxConnections` wait for a free connection instead of each
    // opening its own (thousands at once took thousands of sockets and met the service's connection cap).
    this.agent = new Agent({
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      connections: config.maxConnections,
    });
    this.bodies = new ConnectionGate(config.maxConnections);
    this.heldAgent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: MAX_HELD_POLLS });
  }

  /** Resolves with a 2xx response whose body the caller must consume; rejects with a MediaEnhanceError. */
  send(spec: RequestSpec): Promise<Response> {
    return this.exchange(spec, (res) => Promise.resolve(res));
  }

  /** Sends and reads a JSON answer; a connection cut while the answer is read counts as a failed attempt. */
  sendJson<T>(spec: RequestSpec): Promise<T> {
    return this.exchange(spec, (res) => readJson<T>(res, spec));
  }

  /** Sends and lets `read` turn the answer (2xx, or one `spec.readsAnswer` takes) into the result; failures as sendJson. */
  sendAndRead<T>(spec: RequestSpec, read: (res: Response) => Promise<T>): Promise<T> {
    return this.exchange(spec, read);
  }

  private async exchange<T>(spec: RequestSpec, read: (res: Response) => Promise<T>): Promise<T> {
    try {
      return await this.sendWithRetries(spec, read);
    } catch (err) {
      throw redactError(this.toClientError(err, spec), this.config.apiKey);
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.agent.destroy(), this.heldAgent.destroy()]);
  }

  /**
   * The retry loop: each turn takes a place in the window and sends; a failure goes to `decideRetry`, and the
   * loop throws or waits and goes round again. Loops around this one: a download to a file resumes a body
   * cut off mid-way (download.ts); the status poller sends with `maxRetries: 0` and retries itself.
   */
  private async sendWithRetries<T>(spec: RequestSpec, read: (res: Response) => Promise<T>): Promise<T> {
    const { clock, retry, random } = this.config;
    const limiter = this.config.limiterFor(spec.endpoint);
    const policy = spec.maxRetries === undefined ? retry : { ...retry, maxRetries: spec.maxRetries };
    const idempotent = spec.method === 'GET';
    const replayable = spec.replayable !== false;
    /** Retries made that spent one of `maxRetries`. */
    let retries = 0;
    /** When the service first refused the connection, in the current run of refusals. */
    let unreachableSince: number | undefined;
    /** Throws `error` or waits before the next attempt, as `decideRetry` says; `cause` is what the caller is told. */
    const retryOrThrow = async (attempt: number, failure: RequestFailure, error: unknown, cause: string) => {
      const decision = decideRetry({
        loop: 'request',
        failure,
        idempotent,
        replayable,
        attempt,
        retries,
        policy,
        random,
      });
      if (!decision.retry) {
        if (failure.kind === 'status' && decision.reason === 'not-replayable') {
          (error as Error).message +=
            '; not retried: the file was given as a one-shot stream, pass a path or a Buffer so it can be sent again';
        }
        throw error;
      }
      if (decision.spendsRetry) retries++;
      const reason = decision.reason === 'rate-limited' ? 'rate-limited' : 'retry';
      if (reason === 'rate-limited')
        this.config.rateLimits?.waitingUntil(spec.endpoint, clock.now() + decision.afterMs);
      spec.onWait?.({ endpoint: spec.endpoint, reason, waitMs: decision.afterMs, attempt: attempt + 1, cause });
      await sleep(clock, decision.afterMs, spec.signal);
    };
    for (let attempt = 0; ; attempt++) {
      const slot =
        attempt === 0 && spec.slot
          ? spec.slot
          : await limiter.acquire({
              signal: spec.signal,
              front: attempt > 0,
              onWait: (info) =>
                spec.onWait?.({
                  endpoint: spec.endpoint,
                  reason: 'queued',
                  waitMs: info.waitMs,
                  position: info.position,
                }),
            });
      let res: Response;
      try {
        res = await this.dispatch(spec, slot);
      } catch (err) {
        const code = errorCode(err);
        if (NOT_SENT_CODES.has(code)) slot.refund();
        else slot.settle(); // the service may have seen it: count it
        if (spec.signal?.aborted) throw err;
        unreachableSince = code === REFUSED_CODE ? (unreachableSince ?? clock.now()) : undefined;
        const refusedForMs = unreachableSince === undefined ? 0 : clock.now() - unreachableSince;
        const bodyUnsent = bodyNotWhollySent.has(err as object);
        const failure = { kind: 'connection', code, refusedForMs, bodyUnsent } as const;
        await retryOrThrow(attempt, failure, err, code || (err as Error).message);
        continue;
      }
      unreachableSince = undefined;
      if ((res.statusCode >= 200 && res.statusCode < 300) || spec.readsAnswer?.(res)) {
        try {
          return await read(res);
        } catch (err) {
          // The reader's own verdict on the answer (not JSON) is final; so is an abort.
          if (err instanceof MediaEnhanceError || spec.signal?.aborted) throw err;
          // The service answered, then the connection broke while its answer was read.
          const cause = errorCode(err) || (err as Error).message;
          await retryOrThrow(attempt, { kind: 'answer-lost' }, this.answerLost(err, spec), cause);
          continue;
        }
      }
      const retryAfterMs = parseRetryAfter(res.headers['retry-after'], clock.now());
      const text = await readBounded(res.body, ERROR_BODY_LIMIT);
      const error = errorFromResponse(describe(spec), res.statusCode, text, spec.mediaUid);
      const windowFreesInMs = limiter.nextFreeAt() - clock.now();
      const failure = { kind: 'status', status: res.statusCode, retryAfterMs, windowFreesInMs } as const;
      await retryOrThrow(attempt, failure, error, `HTTP ${res.statusCode}`);
    }
  }

  /**
   * One attempt, following redirects of a GET; the key goes only to the configured origin. A request
   * with a body waits for a place among `maxConnections` before its body is built (a file opened).
   */
  private async dispatch(spec: RequestSpec, slot: Slot): Promise<Response> {
    if (!spec.body) return this.dispatchBuilt(spec, slot, undefined);
    const leave = await this.bodies.enter(spec.signal);
    try {
      return await this.dispatchBuilt(spec, slot, await spec.body());
    } finally {
      leave();
    }
  }

  private async dispatchBuilt(spec: RequestSpec, slot: Slot, bodyParts: RequestBody | undefined): Promise<Response> {
    const { origin, apiKey, requestTimeoutMs } = this.config;
    const limiter = this.config.limiterFor(spec.endpoint);
    let url = new URL(this.config.base + spec.path);
    const sent = watchBodySent(bodyParts?.body);
    for (let hop = 0; ; hop++) {
      const sameOrigin = url.origin === origin;
      const headers: Record<string, string> = { ...spec.headers, ...bodyParts?.headers };
      if (sameOrigin) headers['x-api-key'] = apiKey;
      let res: Response;
      try {
        res = await request(url, {
          dispatcher: spec.held ? this.heldAgent : this.agent,
          method: spec.method,
          headers,
          body: hop === 0 ? bodyParts?.body : undefined,
          signal: spec.signal,
          headersTimeout: requestTimeoutMs,
          bodyTimeout: requestTimeoutMs,
          // Larger reads of big bodies (downloads): fewer, bigger writes to disk, same flat memory.
          highWaterMark: BODY_HIGH_WATER_MARK,
        });
      } catch (err) {
        if (hop === 0 && !sent.whole && err !== null && typeof err === 'object') bodyNotWhollySent.add(err);
        throw err;
      }
      const retryAfterMs =
        res.statusCode === 429 ? parseRetryAfter(res.headers['retry-after'], this.config.clock.now()) : undefined;
      if (res.statusCode === 429) this.config.rateLimits?.tooManyRequests(spec.endpoint);
      if (hop === 0) slot.answered(sameOrigin ? res.headers : {}, res.statusCode === 429, retryAfterMs);
      else if (sameOrigin) limiter.observe(res.headers, retryAfterMs);
      const location = headerText(res.headers.location);
      if (!REDIRECT_STATUSES.has(res.statusCode) || !location || spec.method !== 'GET') return res;
      await res.body.dump();
      if (hop >= MAX_REDIRECTS)
        throw new MediaEnhanceError('HTTP', `more than ${MAX_REDIRECTS} redirects (${describe(spec)})`, {
          status: res.statusCode,
        });
      const next = new URL(location, url);
      if (next.protocol !== 'https:' && !(next.protocol === 'http:' && url.protocol === 'http:')) {
        throw new MediaEnhanceError(
          'HTTP',
          `refused a redirect from ${url.protocol} to ${next.protocol} (${describe(spec)})`,
          { status: res.statusCode },
        );
      }
      url = next;
    }
  }

  /** A POST's answer lost on the way: the service may have done what was asked, so say so. */
  private answerLost(err: unknown, spec: RequestSpec): MediaEnhanceError {
    const code = errorCode(err);
    const message = err instanceof Error ? err.message : String(err);
    const consequence =
      spec.method === 'POST' ? ': the service may have accepted the media; check before sending it again' : '';
    return new MediaEnhanceError(
      'NETWORK',
      `the connection broke while the answer was read (${message})${consequence} (${describe(spec)} to the service at ${this.config.origin}${code ? `: ${code}` : ''})`,
      { cause: err, retryable: true, mediaUid: spec.mediaUid },
    );
  }

  private toClientError(err: unknown, spec: RequestSpec): MediaEnhanceError {
    if (err instanceof MediaEnhanceError) return err;
    if (spec.signal?.aborted) {
      return new MediaEnhanceError('ABORTED', `aborted (${describe(spec)})`, { cause: err, mediaUid: spec.mediaUid });
    }
    const code = errorCode(err);
    const message = err instanceof Error ? err.message : String(err);
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
      return new MediaEnhanceError(
        'TIMEOUT',
        `no answer within ${this.config.requestTimeoutMs} ms (${describe(spec)}: ${code})`,
        {
          cause: err,
          retryable: true,
          mediaUid: spec.mediaUid,
        },
      );
    }
    return new MediaEnhanceError(
      'NETWORK',
      `${message} (${describe(spec)} to the service at ${this.config.origin}${code ? `: ${code}` : ''})`,
      {
        cause: err,
        retryable: true,
        mediaUid: spec.mediaUid,
      },
    );
  }
}

/**
 * Errors of requests whose streamed body had not been read to its end when they failed, with no answer:
 * the service cannot hold the whole body, so it cannot have accepted the request (retry-decision.ts).
 */
const bodyNotWhollySent = new WeakSet<object>();

/**
 * Whether a body has been handed over whole: a stream once it has been read to its end (by the
 * connection writing it); a string or Buffer is written at once and counts as sent (nothing is proven).
 */
function watchBodySent(body: RequestBody['body'] | undefined): { whole: boolean } {
  const sent = { whole: true };
  if (body && typeof body === 'object' && !Buffer.isBuffer(body) && typeof body.once === 'function') {
    sent.whole = false;
    body.once('end', () => (sent.whole = true));
  }
  return sent;
}

/**
 * Largest JSON answer the client reads (metadata, upload and enhance answers, loudness reports): far above
 * any real one, small enough that a hostile or broken service cannot fill the memory at every poll.
 */
export const MAX_JSON_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * The answer's body as JSON; an answer that is not JSON is an HTTP error. One larger than
 * MAX_JSON_ANSWER_BYTES is an HTTP error too, found before it is read whole: its connection is dropped.
 */
export async function readJson<T>(res: Response, spec: RequestSpec): Promise<T> {
  const tooLarge = () => {
    // Destroying an unfinished body closes its connection: the rest is never read.
    res.body.destroy();
    return new MediaEnhanceError(
      'HTTP',
      `the service's answer is larger than ${MAX_JSON_ANSWER_BYTES / (1024 * 1024)} MiB, the most the client reads; the connection was dropped (${describe(spec)}: HTTP ${res.statusCode})`,
      { status: res.statusCode, mediaUid: spec.mediaUid },
    );
  };
  const announced = Number(headerText(res.headers['content-length']));
  if (announced > MAX_JSON_ANSWER_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > MAX_JSON_ANSWER_BYTES) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as T;
  } catch (cause) {
    throw new MediaEnhanceError(
      'HTTP',
      `the service answered ${res.statusCode} with a body that is not JSON (${describe(spec)})`,
      {
        status: res.statusCode,
        cause,
      },
    );
  }
}

function describe(spec: RequestSpec): string {
  return `${spec.method} ${spec.path.split('?')[0]}`;
}

export function errorCode(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.cause?.code === 'string') return e.cause.code;
  return '';
}

export function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Reads at most `limit` bytes of a body as text and discards the rest. */
async function readBounded(body: Response['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      if (size < limit) chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= limit) break;
    }
  } catch {
    // A broken error body still leaves the status to report.
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}
