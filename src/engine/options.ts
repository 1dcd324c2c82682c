import { cpus } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_LIMITING_DB } from '../audio/normalize';
import { DEFAULT_RATE_LIMITS, DEFAULT_WINDOW_MS, type EndpointId } from '../contract/endpoints';
import type { FaultOptions } from './faults';
import { DEFAULT_RETENTION, type RemovedMedia, type RetentionOptions } from './retention';

/** One request as the access log records it: never a header, never a key. */
export interface AccessLogEntry {
  /** When the request arrived (ms since the epoch): the moment the rate limiter counts. */
  at: number;
  method: string;
  path: string;
  status: number;
  ms: number;
}

export interface EngineOptions {
  /** Interface to listen on. Default 127.0.0.1 (loopback only). */
  host?: string;
  /** Port; 0 (the default) takes any free port. */
  port?: number;
  /** Keys accepted in `X-API-Key`; at least one. */
  apiKeys: string[];
  /** Where media are kept; a restart with the same folder resumes every accepted media. */
  dataDir: string;
  /** Requests per window per operation and key; `null` is unlimited. Defaults: the interface's table. */
  limits?: Partial<Record<EndpointId, number | null>>;
  /** Length of the rolling rate-limit window. Default 60 000 ms. */
  windowMs?: number;
  /** Largest upload or fetched file. Default 2 GiB. */
  maxUploadBytes?: number;
  /** Extra time each media spends PROCESSING, to simulate a slow service. Default 0. */
  processingDelayMs?: number;
  /** Worker threads that process media. Default: the number of cores, at most 4. */
  workers?: number;
  /** Module (absolute path) run in the workers to process a media; default: speech enhancement, then loudness normalization (enhance-processor). */
  processorModule?: string;
  /** The ffmpeg program, for media other than WAV. Default: `ffmpeg` on the PATH. */
  ffmpegPath?: string;
  /**
   * Most gain reduction the true-peak limiter may apply to reach a loudness target (dB, 0 or more).
   * A target that needs more is left unreached and the media says so (`target_reached: false`). Default 8.
   */
  maxLimitingDb?: number;
  /** Limits of the background fetch of enhance-json. */
  fetchTimeoutMs?: number;
  /** How long finished media are kept (see retention.ts). Default: 7 days, 5 GiB in all, none removed within 1 h of its last use. */
  retention?: Partial<RetentionOptions>;
  /** Told of each media the retention removed, and why. */
  onRemoved?: (removed: RemovedMedia) => void;
  /** Injected faults, for tests and benchmarks. */
  faults?: FaultOptions;
  /** Receives one access-log line per request. Default: none (the CLI prints them). */
  onLogLine?: (line: string) => void;
  /** Receives each request's log entry as data. */
  onRequest?: (entry: AccessLogEntry) => void;
}

export interface ResolvedEngineOptions extends Required<Omit<EngineOptions, 'onLogLine' | 'onRequest' | 'onRemoved' | 'faults' | 'limits' | 'retention'>> {
  limits: Record<EndpointId, number | null>;
  retention: RetentionOptions;
  onRemoved?: (removed: RemovedMedia) => void;
  faults: FaultOptions;
  onLogLine?: (line: string) => void;
  onRequest?: (entry: AccessLogEntry) => void;
}

export function resolveEngineOptions(options: EngineOptions): ResolvedEngineOptions {
  if (!options || !Array.isArray(options.apiKeys) || options.apiKeys.length === 0 || options.apiKeys.some((k) => typeof k !== 'string' || k.length === 0)) {
    throw new TypeError('apiKeys: at least one non-empty key is required');
  }
  if (typeof options.dataDir !== 'string' || options.dataDir.length === 0) throw new TypeError('dataDir: a folder path is required');
  const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
  if (!(windowMs > 0)) throw new TypeError(`windowMs: must be a positive number (got ${windowMs})`);
  const maxLimitingDb = options.maxLimitingDb ?? DEFAULT_MAX_LIMITING_DB;
  if (typeof maxLimitingDb !== 'number' || !(maxLimitingDb >= 0) || maxLimitingDb === Infinity) {
    throw new TypeError(`maxLimitingDb: must be a number of dB, 0 or more (got ${typeof maxLimitingDb === 'string' ? `"${maxLimitingDb}"` : String(maxLimitingDb)})`);
  }
  return {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    apiKeys: [...options.apiKeys],
    dataDir: options.dataDir,
    limits: { ...DEFAULT_RATE_LIMITS, ...options.limits },
    windowMs,
    maxUploadBytes: options.maxUploadBytes ?? 2 * 1024 ** 3,
    processingDelayMs: options.processingDelayMs ?? 0,
    workers: Math.max(1, options.workers ?? Math.min(4, cpus().length)),
    processorModule: options.processorModule ?? join(__dirname, 'enhance-processor.js'),
    ffmpegPath: options.ffmpegPath ?? 'ffmpeg',
    maxLimitingDb,
    fetchTimeoutMs: options.fetchTimeoutMs ?? 60_000,
    faults: options.faults ?? {},
    retention: { ...DEFAULT_RETENTION, ...options.retention },
    onRemoved: options.onRemoved,
    onLogLine: options.onLogLine,
    onRequest: options.onRequest,
  };
}
