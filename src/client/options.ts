import { isIP } from 'node:net';
import { DEFAULT_RATE_LIMITS, DEFAULT_WINDOW_MS, type EndpointId } from '../contract/endpoints';
import { DEFAULT_RETRY, type RetryPolicy } from './backoff';
import type { Clock } from './clock';
import { MediaEnhanceError } from './errors';
import { DEFAULT_POLL_INTERVALS, type PollIntervals } from './poll-intervals';
import type { SharedLimiterOptions } from './shared-limiter/redis-store';

export interface ClientOptions {
  /** Where the service answers, e.g. `http://127.0.0.1:8600` (the local engine) or an `https://` URL. */
  baseUrl: string;
  /** Sent as `X-API-Key`, only to the origin of `baseUrl`. */
  apiKey: string;
  /** Requests per window for each operation; `null` means no local limit. Defaults: the interface's table. */
  limits?: Partial<Record<EndpointId, number | null>>;
  /** Length of the rolling window; the service's `X-RateLimit-Window` replaces it once seen. */
  windowMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Longest wait for response headers, and longest silence within a body. Default 60 s. */
  requestTimeoutMs?: number;
  /**
   * Connections open at once to the service (and to each origin a download is redirected to); further
   * requests wait for one. Default 8: thousands of uploads at once share them instead of each opening
   * its own socket (and file) and meeting the service's connection cap.
   */
  maxConnections?: number;
  /** Status polling intervals of `waitForCompletion`; defaults follow the interface's guidance. */
  poll?: Partial<PollIntervals>;
  /**
   * Shares the rate limits with every other instance that uses the same key, through Redis, so that
   * together they stay inside the key's limits. Unset: this client keeps its own windows.
   */
  sharedLimiter?: SharedLimiterOptions;
  /** Allows `http:` to a host that is not loopback, where the key would travel in clear. */
  allowInsecureHttp?: boolean;
  /**
   * The extensions of the interface the service declares (docs/interface.md#declared-extensions), e.g.
   * `['output-encoding', 'loudness-only', 'trim-pauses', 'several-outputs', 'dereverb']` for the built-in engine
   * (ENGINE_EXTENSIONS); or `'ask'`: the client asks the service (GET /v2/extensions, which the built-in
   * engine answers, behind a load balancer too) the first time a request uses an extension, and keeps
   * the answer. Default none: a member or value of an extension is refused before sending, naming it.
   */
  extensions?: readonly string[] | 'ask';
  /** For tests and simulations. */
  clock?: Clock;
  random?: () => number;
}

export interface ResolvedOptions {
  origin: string;
  /** Base URL without a trailing slash; may carry a path prefix. */
  base: string;
  apiKey: string;
  limits: Record<EndpointId, number | null>;
  windowMs: number;
  retry: RetryPolicy;
  requestTimeoutMs: number;
  maxConnections: number;
  poll: PollIntervals;
  sharedLimiter?: SharedLimiterOptions;
  extensions: readonly string[] | 'ask';
}

/** Connections at once to one origin, unless `maxConnections` says otherwise. */
export const DEFAULT_MAX_CONNECTIONS = 8;
const MAX_CONNECTIONS_BOUND = 1024;

export function resolveOptions(options: ClientOptions): ResolvedOptions {
  if (!options || typeof options !== 'object')
    throw configError('options', options, 'an object with baseUrl and apiKey is required');
  const { baseUrl, apiKey } = options;
  if (typeof apiKey !== 'string' || apiKey.length === 0) {
    // The value itself is never shown: it may be a key pasted in the wrong place.
    throw new MediaEnhanceError('VALIDATION', 'apiKey: a non-empty string is required', {
      details: ['apiKey: a non-empty string is required'],
    });
  }
  if (!API_KEY_CHARACTERS.test(apiKey)) {
    // A line break or a space pasted with the key would make every request fail before it is sent
    // (the key cannot be an HTTP header): a setting error now, naming the rule and never the key.
    const rule = `apiKey: must be printable ASCII characters without spaces or line breaks (it is sent as the X-API-Key header); the key given has ${describeBadCharacters(apiKey)}`;
    throw new MediaEnhanceError('VALIDATION', `MediaEnhanceClient: ${rule}`, { details: [rule] });
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw configError('baseUrl', redactUserinfo(String(baseUrl)), 'must be an absolute http:// or https:// URL');
  }
  // Whatever the scheme: the credentials are never echoed, and never sent.
  if (url.username || url.password)
    throw configError('baseUrl', redactUserinfo(String(baseUrl)), 'must not contain credentials (user:password@)');
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw configError('baseUrl', baseUrl, 'must use http: or https:');
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !options.allowInsecureHttp) {
    throw configError(
      'baseUrl',
      baseUrl,
      'plain http: is only allowed to a loopback host (the API key would travel unencrypted); use https: or set allowInsecureHttp',
    );
  }
  const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
  if (!(windowMs > 0)) throw configError('windowMs', windowMs, 'must be a positive number of milliseconds');
  const requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
  if (!(requestTimeoutMs > 0))
    throw configError('requestTimeoutMs', requestTimeoutMs, 'must be a positive number of milliseconds');
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  if (!(Number.isInteger(maxConnections) && maxConnections >= 1 && maxConnections <= MAX_CONNECTIONS_BOUND))
    throw configError('maxConnections', maxConnections, `must be a whole number from 1 to ${MAX_CONNECTIONS_BOUND}`);
  const limits = { ...DEFAULT_RATE_LIMITS, ...options.limits };
  for (const [endpoint, limit] of Object.entries(limits)) {
    if (limit !== null && !(Number.isInteger(limit) && limit > 0))
      throw configError(`limits.${endpoint}`, limit, 'must be a positive integer or null');
  }
  const sharedLimiter = checkSharedLimiter(options.sharedLimiter);
  const extensions = options.extensions ?? [];
  if (extensions !== 'ask' && (!Array.isArray(extensions) || !extensions.every((name) => typeof name === 'string')))
    throw configError('extensions', extensions, "must be an array of extension names, or 'ask'");
  return {
    origin: url.origin,
    base: `${url.origin}${url.pathname.replace(/\/+$/, '')}`,
    apiKey,
    limits,
    windowMs,
    retry: { ...DEFAULT_RETRY, ...options.retry },
    requestTimeoutMs,
    maxConnections,
    poll: { ...DEFAULT_POLL_INTERVALS, ...options.poll },
    sharedLimiter,
    extensions: extensions === 'ask' ? 'ask' : [...extensions],
  };
}

function checkSharedLimiter(shared: SharedLimiterOptions | undefined): SharedLimiterOptions | undefined {
  if (shared === undefined || shared === null) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(shared.redisUrl);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:')) {
    // Never echoed: the URL may carry a password.
    throw new MediaEnhanceError('VALIDATION', 'sharedLimiter.redisUrl: must be a redis:// or rediss:// URL', {
      details: ['sharedLimiter.redisUrl: must be a redis:// or rediss:// URL'],
    });
  }
  const { timeoutMs } = shared;
  if (timeoutMs !== undefined && !(timeoutMs > 0))
    throw configError('sharedLimiter.timeoutMs', timeoutMs, 'must be a positive number of milliseconds');
  return shared;
}

/** What an API key may hold: a header value's visible characters, nothing that HTTP would cut or refuse. */
const API_KEY_CHARACTERS = /^[\x21-\x7e]+$/;

/** Which kinds of character broke the rule, never the characters themselves in their place. */
function describeBadCharacters(apiKey: string): string {
  const codes = [...apiKey].map((c) => c.codePointAt(0)!);
  const kinds: string[] = [];
  if (codes.some((c) => c === 0x0a || c === 0x0d)) kinds.push('a line break');
  if (codes.some((c) => c === 0x20 || c === 0x09)) kinds.push('a space or tab');
  if (codes.some((c) => (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0x7f))
    kinds.push('a control character');
  if (codes.some((c) => c > 0x7f)) kinds.push('a character outside ASCII');
  return kinds.join(' and ');
}

/** A URL as an error may quote it: any `user:password@` replaced, parsed or not. */
export function redactUserinfo(text: string): string {
  // Up to the last `@`: a URL that does not parse may hold one anywhere, and a password may hold `/`.
  return text.replace(/^([a-z][a-z0-9+.-]*:(?:\/\/)?)?[^]*@/i, '$1[credentials removed]@');
}

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host.startsWith('::ffff:127.');
  return false;
}

function configError(field: string, value: unknown, rule: string): MediaEnhanceError {
  const line = `${field}: ${rule} (got ${JSON.stringify(value) ?? String(value)})`;
  return new MediaEnhanceError('VALIDATION', `MediaEnhanceClient: ${line}`, { details: [line] });
}
