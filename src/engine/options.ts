import { cpus } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_STALL_MS } from '../audio/child-runs';
import { DEFAULT_MAX_DECODED_BYTES } from './processors/decode-limits';
import { DEFAULT_MAX_LIMITING_DB } from '../audio/normalize';
import { DEFAULT_RATE_LIMITS, DEFAULT_WINDOW_MS, ENDPOINT_IDS, type EndpointId } from '../contract/endpoints';
import { parseNetworks } from './jobs/address-policy';
import type { FaultOptions } from './faults';
import type { AccessLogEntry } from './http/access-log';
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from './http/server-limits';
import { DEFAULT_RETENTION, type RemovedMedia, type RetentionOptions } from './storage/retention';
import { parseS3Location, type S3Location } from './storage/s3-location';
import type { S3Options } from './storage/s3-media-files';

/** A worker thread idle this long ends (EngineOptions.workerIdleMs). */
export const DEFAULT_WORKER_IDLE_MS = 60_000;
/** The engine's defaults that the CLI's help states too (cli-flags.ts). */
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_MAX_UPLOAD_BYTES = 2 * 1024 ** 3;
export const DEFAULT_PROCESSING_DELAY_MS = 0;
export const DEFAULT_METADATA_WAIT_S = 0;
export const DEFAULT_FETCH_TIMEOUT_MS = 60_000;
export const DEFAULT_JOB_LOCK_MS = 30_000;

export interface EngineOptions {
  /** Interface to listen on. Default 127.0.0.1 (loopback only). */
  host?: string;
  /** Port; 0 (the default) takes any free port. */
  port?: number;
  /** Keys accepted in `X-API-Key`; at least one. */
  apiKeys: string[];
  /**
   * Where media are kept; a restart with the same folder resumes every accepted media. With `storage`,
   * it holds the records and the work files of jobs only.
   */
  dataDir: string;
  /**
   * `s3://<bucket>/<prefix>`: the media's files (original, result, loudness report) go to this S3 bucket
   * instead of `dataDir`, so several engines can serve them. Credentials come from the AWS environment
   * variables or the AWS SDK's default chain, never from here. Default: none (files in `dataDir`).
   */
  storage?: string;
  /** How to reach the S3 service of `storage`. */
  s3?: {
    /** Its URL, for a service other than AWS S3 (Ceph RGW, Garage, SeaweedFS, R2, MinIO...). */
    endpoint?: string;
    /** Default: `AWS_REGION` from the environment, else `us-east-1`. */
    region?: string;
    /** Bucket in the path (`host/bucket/key`) rather than the host name, as most services but AWS need. Default false. */
    forcePathStyle?: boolean;
  };
  /** Requests per window per operation and key; `null` is unlimited. Defaults: the interface's table. */
  limits?: Partial<Record<EndpointId, number | null>>;
  /** Length of the rolling rate-limit window. Default 60 000 ms. */
  windowMs?: number;
  /** Largest upload or fetched file. Default 2 GiB. */
  maxUploadBytes?: number;
  /**
   * Most bytes a compressed input (any format but WAV) may decode to, as 32-bit float WAV in the data
   * folder. An input whose headers declare more is refused before decoding (`MEDIA_TOO_LARGE`); the decode
   * is bounded to it (`-t`, `-fs`) in case they lie; an upload is refused (507) when the data folder has
   * no room for what it decodes to. Default 8 GiB (about six hours of 48 kHz stereo).
   */
  maxDecodedBytes?: number;
  /** Extra time each media spends PROCESSING, to simulate a slow service. Default 0. */
  processingDelayMs?: number;
  /**
   * Longest `?wait=` a metadata request may hold, in seconds (the waiting-metadata extension,
   * docs/interface.md#waiting-metadata); 0, the default, offers no such wait, as the interface has none.
   * The config node's built-in engine offers it. Held below `server.idleTimeoutMs`, which would cut the wait.
   */
  metadataWaitS?: number;
  /** Worker threads that process media. Default: the number of cores, at most 4. */
  workers?: number;
  /**
   * A worker thread with nothing to do for this long (ms) ends and gives its memory back (a model's
   * WebAssembly memory never shrinks while its thread lives); the next media starts a fresh one. 0 keeps
   * them. Default 60 000.
   */
  workerIdleMs?: number;
  /** Module (absolute path) run in the workers to process a media; default: speech enhancement, then loudness normalization (processors/enhance-processor). */
  processorModule?: string;
  /** The ffmpeg program, for media other than WAV. Default: `ffmpeg` on the PATH. */
  ffmpegPath?: string;
  /**
   * How long an ffmpeg or ffprobe run may make no progress before it is killed and its media fails
   * (`DECODE_FAILED`). Default 120000 (2 minutes); a long file is never cut, as progress restarts it.
   */
  ffmpegStallMs?: number;
  /**
   * Most gain reduction the true-peak limiter may apply to reach a loudness target (dB, 0 or more).
   * A target that needs more is left unreached and the media says so (`target_reached: false`). Default 8.
   */
  maxLimitingDb?: number;
  /** Limits of the background fetch of enhance-json. */
  fetchTimeoutMs?: number;
  /**
   * Whether the enhance-json fetch may reach loopback, private, link-local and other internal addresses.
   * Default: yes when the engine listens on loopback only (its callers are on this machine already),
   * no when it listens beyond (a caller must not use the engine to reach what only it can reach).
   */
  allowPrivateFetch?: boolean;
  /** Addresses or CIDR ranges the fetch may reach even when private ones are refused, e.g. `['10.0.0.5', '192.168.1.0/24']`. */
  allowFetchFrom?: string[];
  /** What the HTTP server accepts at once and how long it waits; see ServerLimits for the defaults. */
  server?: Partial<ServerLimits>;
  /** How long finished media are kept (see storage/retention.ts). Default: 7 days, 5 GiB in all, none removed within 1 h of its last use. */
  retention?: Partial<RetentionOptions>;
  /** Told of each media the retention removed, and why. */
  onRemoved?: (removed: RemovedMedia) => void;
  /**
   * `redis://[user:password@]host[:port][/db]` (or `rediss://`): the Redis that instances sharing the
   * work keep their state in (records, jobs on BullMQ, rate-limit windows, the retention's turn). Without
   * it the engine keeps everything to itself, on disk. Instances must share the data folder too.
   */
  redis?: string;
  /**
   * With `redis`: how long a job's lock holds without being renewed, so how soon after an instance dies
   * another takes its jobs up. Default 30 000 ms.
   */
  jobLockMs?: number;
  /**
   * The engine's own clock (ms since the epoch). Default `Date.now`; a test sets one instance's time
   * apart from the others' with it.
   */
  clock?: () => number;
  /** Injected faults, for tests and benchmarks. */
  faults?: FaultOptions;
  /** Receives one access-log line per request. Default: none (the CLI prints them). */
  onLogLine?: (line: string) => void;
  /** Receives each request's log entry as data. */
  onRequest?: (entry: AccessLogEntry) => void;
  /**
   * Receives a line for each problem no answer tells in full: an unexpected fault behind a 500, an
   * answer that could not be written, the cause of a failed fetch. Never a key. Default: standard error.
   */
  onErrorLine?: (line: string) => void;
}

export interface ResolvedEngineOptions extends Required<
  Omit<
    EngineOptions,
    | 'onLogLine'
    | 'onRequest'
    | 'onRemoved'
    | 'onErrorLine'
    | 'faults'
    | 'limits'
    | 'retention'
    | 'server'
    | 'storage'
    | 's3'
    | 'redis'
  >
> {
  /** The S3 storage of media files, or null: in the data folder. */
  storage: { location: S3Location; s3: S3Options } | null;
  redis?: string;
  limits: Record<EndpointId, number | null>;
  retention: RetentionOptions;
  server: ServerLimits;
  onRemoved?: (removed: RemovedMedia) => void;
  faults: FaultOptions;
  onLogLine?: (line: string) => void;
  onRequest?: (entry: AccessLogEntry) => void;
  onErrorLine: (line: string) => void;
}

/** A rule a number must follow, and how an error states it. */
export interface NumberRule {
  test(value: number): boolean;
  text: string;
}

export const RULES = {
  positiveInteger: { test: (v: number) => Number.isInteger(v) && v > 0, text: 'must be a whole number of at least 1' },
  nonNegativeInteger: {
    test: (v: number) => Number.isInteger(v) && v >= 0,
    text: 'must be a whole number of at least 0',
  },
  positive: { test: (v: number) => Number.isFinite(v) && v > 0, text: 'must be a number above 0' },
  nonNegative: { test: (v: number) => Number.isFinite(v) && v >= 0, text: 'must be a number of at least 0' },
  probability: {
    test: (v: number) => Number.isFinite(v) && v >= 0 && v <= 1,
    text: 'must be a probability from 0 to 1',
  },
  port: {
    test: (v: number) => Number.isInteger(v) && v >= 0 && v <= 65535,
    text: 'must be a whole number from 0 to 65535',
  },
  /** Node's timers hold at most 2^31 - 1 ms (24.8 days); a longer one fires at once. */
  timeoutMs: {
    test: (v: number) => Number.isInteger(v) && v >= 0 && v <= 2 ** 31 - 1,
    text: 'must be a whole number of milliseconds from 0 to 2147483647',
  },
  positiveTimeoutMs: {
    test: (v: number) => Number.isInteger(v) && v > 0 && v <= 2 ** 31 - 1,
    text: 'must be a whole number of milliseconds from 1 to 2147483647',
  },
} satisfies Record<string, NumberRule>;

/** The value when it follows the rule; otherwise an error naming the option, the rule and the value. */
export function checked<T extends number | undefined>(name: string, value: T, rule: NumberRule): T {
  if (value === undefined) return value;
  if (typeof value !== 'number' || !rule.test(value))
    throw new TypeError(`${name}: ${rule.text} (got ${JSON.stringify(value) ?? String(value)})`);
  return value;
}

export function resolveEngineOptions(options: EngineOptions): ResolvedEngineOptions {
  if (
    !options ||
    !Array.isArray(options.apiKeys) ||
    options.apiKeys.length === 0 ||
    options.apiKeys.some((k) => typeof k !== 'string' || k.length === 0)
  ) {
    throw new TypeError('apiKeys: at least one non-empty key is required');
  }
  if (typeof options.dataDir !== 'string' || options.dataDir.length === 0)
    throw new TypeError('dataDir: a folder path is required');
  const windowMs = checked('windowMs', options.windowMs ?? DEFAULT_WINDOW_MS, RULES.positiveTimeoutMs);
  const host = options.host ?? DEFAULT_HOST;
  const maxLimitingDb = checked('maxLimitingDb', options.maxLimitingDb ?? DEFAULT_MAX_LIMITING_DB, RULES.nonNegative);
  const server = resolveServerLimits(options.server);
  const metadataWaitS = checked(
    'metadataWaitS',
    options.metadataWaitS ?? DEFAULT_METADATA_WAIT_S,
    RULES.nonNegativeInteger,
  );
  // A held answer is a connection on which nothing moves: the idle timeout would cut it first.
  if (metadataWaitS * 1000 >= server.idleTimeoutMs)
    throw new TypeError(
      `metadataWaitS: must be shorter than server.idleTimeoutMs, ${server.idleTimeoutMs} ms (got ${metadataWaitS})`,
    );
  return {
    host,
    port: checked('port', options.port ?? 0, RULES.port),
    apiKeys: [...options.apiKeys],
    dataDir: options.dataDir,
    limits: resolveLimits(options.limits),
    windowMs,
    maxUploadBytes: checked(
      'maxUploadBytes',
      options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
      RULES.positiveInteger,
    ),
    maxDecodedBytes: checked(
      'maxDecodedBytes',
      options.maxDecodedBytes ?? DEFAULT_MAX_DECODED_BYTES,
      RULES.positiveInteger,
    ),
    processingDelayMs: checked(
      'processingDelayMs',
      options.processingDelayMs ?? DEFAULT_PROCESSING_DELAY_MS,
      RULES.timeoutMs,
    ),
    metadataWaitS,
    workers: checked('workers', options.workers ?? Math.min(4, cpus().length), RULES.positiveInteger),
    workerIdleMs: checked('workerIdleMs', options.workerIdleMs ?? DEFAULT_WORKER_IDLE_MS, RULES.timeoutMs),
    processorModule: options.processorModule ?? join(__dirname, 'processors', 'enhance-processor.js'),
    ffmpegPath: options.ffmpegPath ?? 'ffmpeg',
    ffmpegStallMs: checked('ffmpegStallMs', options.ffmpegStallMs ?? DEFAULT_STALL_MS, RULES.positiveTimeoutMs),
    maxLimitingDb,
    fetchTimeoutMs: checked(
      'fetchTimeoutMs',
      options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS,
      RULES.positiveTimeoutMs,
    ),
    allowPrivateFetch: options.allowPrivateFetch ?? isLoopbackHost(host),
    allowFetchFrom: resolveAllowFetchFrom(options.allowFetchFrom),
    server,
    faults: resolveFaults(options.faults ?? {}),
    redis: resolveRedisUrl(options.redis),
    jobLockMs: checked('jobLockMs', options.jobLockMs ?? DEFAULT_JOB_LOCK_MS, RULES.positiveTimeoutMs),
    retention: resolveRetention(options.retention),
    clock: resolveClock(options.clock),
    storage: resolveStorage(options.storage, options.s3),
    onRemoved: options.onRemoved,
    onLogLine: options.onLogLine,
    onRequest: options.onRequest,
    onErrorLine: options.onErrorLine ?? ((line) => process.stderr.write(`media-enhance-engine: ${line}\n`)),
  };
}

/** Loopback only: 127.0.0.0/8, ::1 and localhost; anything else (0.0.0.0, a LAN address) reaches beyond this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    bare === 'localhost' ||
    bare === '::1' ||
    /^127\.\d+\.\d+\.\d+$/.test(bare) ||
    /^::ffff:127\.\d+\.\d+\.\d+$/.test(bare)
  );
}

function resolveLimits(given: EngineOptions['limits']): Record<EndpointId, number | null> {
  const limits = { ...DEFAULT_RATE_LIMITS };
  for (const [endpoint, limit] of Object.entries(given ?? {})) {
    if (!ENDPOINT_IDS.includes(endpoint as EndpointId))
      throw new TypeError(`limits.${endpoint}: not an operation; permitted: ${ENDPOINT_IDS.join(', ')}`);
    if (limit === undefined) continue;
    // 0 would refuse every request with a Retry-After no wait can honour; null is "no limit".
    limits[endpoint as EndpointId] =
      limit === null
        ? null
        : checked(`limits.${endpoint}`, limit, {
            ...RULES.positiveInteger,
            text: `${RULES.positiveInteger.text}, or null for no limit`,
          });
  }
  return limits;
}

function resolveServerLimits(given: Partial<ServerLimits> | undefined): ServerLimits {
  const limits = { ...DEFAULT_SERVER_LIMITS };
  for (const [name, value] of Object.entries(given ?? {})) {
    if (!Object.hasOwn(DEFAULT_SERVER_LIMITS, name))
      throw new TypeError(
        `server.${name}: not a server limit; permitted: ${Object.keys(DEFAULT_SERVER_LIMITS).join(', ')}`,
      );
    if (value === undefined) continue;
    const rule = name.endsWith('Ms')
      ? name === 'requestTimeoutMs'
        ? RULES.timeoutMs
        : RULES.positiveTimeoutMs
      : RULES.positiveInteger;
    limits[name as keyof ServerLimits] = checked(`server.${name}`, value, rule);
  }
  if (limits.requestTimeoutMs > 0 && limits.requestTimeoutMs < limits.headersTimeoutMs) {
    throw new TypeError(
      `server.requestTimeoutMs: must be 0 (none) or at least server.headersTimeoutMs, ${limits.headersTimeoutMs} (got ${limits.requestTimeoutMs})`,
    );
  }
  return limits;
}

function resolveAllowFetchFrom(given: string[] | undefined): string[] {
  if (given === undefined) return [];
  if (!Array.isArray(given))
    throw new TypeError(`allowFetchFrom: must be a list of addresses or CIDR ranges (got ${JSON.stringify(given)})`);
  parseNetworks(given, 'allowFetchFrom'); // throws naming the entry that is not an address or range
  return [...given];
}

export function resolveStorage(
  storage: string | undefined,
  s3: EngineOptions['s3'],
): { location: S3Location; s3: S3Options } | null {
  if (storage === undefined) {
    if (s3 !== undefined)
      throw new TypeError('s3: applies only with storage, s3://<bucket>/<prefix>; storage is not set');
    return null;
  }
  if (typeof storage !== 'string')
    throw new TypeError(`storage: must be s3://<bucket>/<prefix> (got ${JSON.stringify(storage)})`);
  const location = parseS3Location(storage);
  const { endpoint, region, forcePathStyle } = s3 ?? {};
  if (endpoint !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(endpoint);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password)
      throw new TypeError(
        `s3.endpoint: must be an http:// or https:// URL without credentials (got ${JSON.stringify(url ? url.origin : endpoint)})`,
      );
  }
  if (region !== undefined && (typeof region !== 'string' || !/^[a-z0-9-]{1,64}$/.test(region)))
    throw new TypeError(`s3.region: must be a region name such as us-east-1 (got ${JSON.stringify(region)})`);
  if (forcePathStyle !== undefined && typeof forcePathStyle !== 'boolean')
    throw new TypeError(`s3.forcePathStyle: must be true or false (got ${JSON.stringify(forcePathStyle)})`);
  return {
    location,
    s3: {
      ...(endpoint !== undefined ? { endpoint } : {}),
      region: region ?? (process.env.AWS_REGION || 'us-east-1'),
      forcePathStyle: forcePathStyle ?? false,
    },
  };
}

function resolveFaults(faults: FaultOptions): FaultOptions {
  for (const name of [
    'error500Rate',
    'error503Rate',
    'resetRate',
    'dripRate',
    'failProcessingRate',
    'diskFullRate',
  ] as const)
    checked(`faults.${name}`, faults[name], RULES.probability);
  checked('faults.dripBytesPerSecond', faults.dripBytesPerSecond, RULES.positive);
  checked('faults.forced429', faults.forced429, RULES.nonNegativeInteger);
  return faults;
}

function resolveRedisUrl(url: unknown): string | undefined {
  if (url === undefined) return undefined;
  if (typeof url !== 'string' || !/^rediss?:\/\/[^/?#]/i.test(url))
    throw new TypeError(
      `redis: must be a URL redis://[user:password@]host[:port][/db] or rediss://... (got ${JSON.stringify(withoutPassword(url))})`,
    );
  return url;
}

/** A Redis URL fit for an error or a log: its password replaced (up to the last `@` of the authority: a password may hold one). */
export function withoutPassword(url: unknown): unknown {
  if (typeof url !== 'string') return url;
  return url.replace(/^([a-z]+:\/\/[^:@/]*:)[^/]*@/i, '$1***@');
}

function resolveClock(clock: unknown): () => number {
  if (clock === undefined) return Date.now;
  if (typeof clock !== 'function')
    throw new TypeError(`clock: must be a function returning ms since the epoch (got ${typeof clock})`);
  return clock as () => number;
}

function resolveRetention(given: Partial<RetentionOptions> | undefined): RetentionOptions {
  const retention = { ...DEFAULT_RETENTION };
  for (const [name, value] of Object.entries(given ?? {})) {
    if (!Object.hasOwn(DEFAULT_RETENTION, name))
      throw new TypeError(
        `retention.${name}: not a retention option; permitted: ${Object.keys(DEFAULT_RETENTION).join(', ')}`,
      );
    if (value !== undefined) (retention as Record<string, unknown>)[name] = value;
  }
  if (retention.maxAgeMs !== null) checked('retention.maxAgeMs', retention.maxAgeMs, RULES.positive);
  if (retention.maxTotalBytes !== null) checked('retention.maxTotalBytes', retention.maxTotalBytes, RULES.positive);
  checked('retention.graceMs', retention.graceMs, RULES.nonNegative);
  checked('retention.sweepIntervalMs', retention.sweepIntervalMs, RULES.positiveTimeoutMs);
  return retention;
}
