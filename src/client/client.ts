import { setMaxListeners } from 'node:events';
import { ENDPOINT_IDS, PATHS, type EndpointId } from '../contract/endpoints';
import {
  checkEnhanceJsonBody,
  checkEnhancementSettings,
  checkMediaUid,
  checkStep,
  type EnhanceJsonBody,
  type EnhancementSettings,
} from '../contract/fields';
import type { FieldIssue } from '../contract/field-issue';
import { declaredIn, EXTENSIONS_PATH, usesExtension } from '../contract/extensions';
import { LOUDNESS_REPORT_HEADER, LOUDNESS_REPORT_PATH, type LoudnessReport } from '../contract/loudness-report';
import { declaredMetadataWait, METADATA_WAIT_HEADER, METADATA_WAIT_PARAM } from '../contract/metadata-wait';
import { MAX_TIMER_MS, systemClock, type Clock } from './clock';
import {
  downloadStream,
  downloadToFile,
  type DownloadContext,
  type DownloadedFile,
  type DownloadedStream,
  type DownloadOptions,
} from './download';
import { MediaEnhanceError, redactError, validationError } from './errors';
import { RateLimitLog, type LimitState, type OperationLimitState } from './limit-state';
import { fileSource, multipartBody, type FileInput } from './multipart';
import { resolveOptions, type ClientOptions, type ResolvedOptions } from './options';
import { RollingWindowLimiter, type Slot, type WindowLimiter } from './rate-limiter';
import { RedisWindowStore, type SharingState } from './shared-limiter/redis-store';
import { SharedWindowLimiter } from './shared-limiter/shared-window-limiter';
import { Sharing } from './shared-limiter/sharing';
import { StatusPoller, type WaitOptions } from './status-poller';
import { headerText, readJson, Transport, type RequestSpec, type WaitEvent } from './transport';
import type { EnhanceAudioResult, MediaMetadata, ProgressCallback, VideoRecord } from './types';

export interface CallOptions {
  signal?: AbortSignal;
  /** Told when the request waits for a place in the rate-limit window or before a retry. */
  onWait?: (event: WaitEvent) => void;
}

export interface TransferOptions extends CallOptions {
  onProgress?: ProgressCallback;
}

export interface EnhanceVideoRequest {
  file: FileInput;
  fileName?: string;
  video_enhancement?: EnhancementSettings | null;
}

export interface UploadMediaRequest {
  file: FileInput;
  fileName?: string;
  media_enhancement?: EnhancementSettings | null;
}

/**
 * The client of the media enhancement service. One instance owns one rate limiter per operation and one
 * status poller; share it among everything that uses the same key so they share those too.
 */
export class MediaEnhanceClient {
  private readonly options: ResolvedOptions;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly limiters: Record<EndpointId, WindowLimiter>;
  private readonly sharing: Sharing | undefined;
  private readonly transport: Transport;
  private readonly poller: StatusPoller;
  private readonly closing = new AbortController();
  private readonly rateLimitLog: RateLimitLog;

  constructor(options: ClientOptions) {
    this.options = resolveOptions(options);
    // Every request of the client listens to this signal: many at once is normal, not a leak.
    setMaxListeners(0, this.closing.signal);
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    const { limits, windowMs, sharedLimiter } = this.options;
    const sharing = sharedLimiter
      ? new Sharing(new RedisWindowStore(sharedLimiter, this.options.apiKey), sharedLimiter.onStateChange)
      : undefined;
    this.sharing = sharing;
    this.limiters = Object.fromEntries(
      ENDPOINT_IDS.map((id) => {
        const local = new RollingWindowLimiter(limits[id], windowMs, this.clock);
        const limiter: WindowLimiter = sharing ? new SharedWindowLimiter(id, local, sharing, this.clock) : local;
        return [id, limiter];
      }),
    ) as Record<EndpointId, WindowLimiter>;
    this.rateLimitLog = new RateLimitLog(this.clock);
    this.transport = new Transport({
      rateLimits: this.rateLimitLog,
      origin: this.options.origin,
      base: this.options.base,
      apiKey: this.options.apiKey,
      requestTimeoutMs: this.options.requestTimeoutMs,
      maxConnections: this.options.maxConnections,
      retry: this.options.retry,
      clock: this.clock,
      random: this.random,
      limiterFor: (endpoint) => this.limiters[endpoint],
    });
    this.poller = new StatusPoller({
      limiter: this.limiters.getMetadata,
      clock: this.clock,
      random: this.random,
      intervals: this.options.poll,
      fetchMetadata: (uid, slot, signal, waitS) => this.pollMetadata(uid, slot, signal, waitS),
      waitOffered: () => this.metadataWaitS(),
      waitRefused: () => (this.waitRefused = true),
    });
  }

  /** The longest metadata wait the service's last status answer offered; undefined when it offers none. */
  private declaredWaitS: number | undefined;
  /** The service refused a wait it offered: it is polled plainly from then on, whatever its answers say. */
  private waitRefused = false;
  /** The service's declared extensions once asked (ClientOptions.extensions 'ask'). */
  private declared: Promise<readonly string[]> | undefined;

  /** One status request of the poller, learning from its answer whether the service holds answers. */
  private pollMetadata(uid: string, slot: Slot, signal: AbortSignal, waitS?: number): Promise<MediaMetadata> {
    const query = waitS === undefined ? '' : `?${METADATA_WAIT_PARAM}=${waitS}`;
    const spec = {
      endpoint: 'getMetadata',
      method: 'GET',
      path: PATHS.metadata(uid) + query,
      slot,
      signal,
      maxRetries: 0,
      mediaUid: uid,
      held: waitS !== undefined,
    } satisfies RequestSpec;
    return this.transport.sendAndRead(spec, (res) => {
      this.declaredWaitS = declaredMetadataWait(headerText(res.headers[METADATA_WAIT_HEADER]));
      return readJson<MediaMetadata>(res, spec);
    });
  }

  /** The wait to ask for: what the service offers, held well within the client's own request timeout. */
  private metadataWaitS(): number | undefined {
    if (this.declaredWaitS === undefined || this.waitRefused) return undefined;
    const withinTimeout = Math.floor(this.options.requestTimeoutMs / 1000) - 2;
    const seconds = Math.min(this.declaredWaitS, withinTimeout);
    return seconds >= 1 ? seconds : undefined;
  }

  /** The service's origin (scheme, host, port); never the key. */
  get origin(): string {
    return this.options.origin;
  }

  /**
   * The extensions of the interface the service declares: ClientOptions.extensions, or with `'ask'` the
   * service's own answer at GET /v2/extensions, asked once (a failed ask is asked again next time; a
   * service without the route declares none).
   */
  declaredExtensions(): Promise<readonly string[]> {
    const given = this.options.extensions;
    if (given !== 'ask') return Promise.resolve(given);
    // One ask for every caller, so it follows none's signal: only the client's close ends it.
    this.declared ??= this.guard(() => this.askExtensions()).catch((err: unknown) => {
      this.declared = undefined;
      throw err;
    });
    return this.declared;
  }

  /** Asks the service which extensions it declares; counted as a status request, the lightest there is. */
  private askExtensions(): Promise<readonly string[]> {
    const spec = {
      endpoint: 'getMetadata',
      method: 'GET',
      path: EXTENSIONS_PATH,
      signal: this.signal(undefined),
      // A service without the route answers 404 (or 401, 403, 405): it declares none.
      readsAnswer: (res) => res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 429,
    } satisfies RequestSpec;
    return this.transport.sendAndRead(spec, async (res) => {
      if (res.statusCode >= 400) {
        await res.body.dump();
        return [];
      }
      return declaredIn(await readJson<unknown>(res, spec).catch(() => null));
    });
  }

  /**
   * Every value of `settings` checked first; then, for a member or value of an extension, whether the
   * service declares it (asking it only then).
   */
  private async checkSettings(
    operation: string,
    settings: unknown,
    part: 'media_enhancement' | 'video_enhancement',
  ): Promise<void> {
    this.check(operation, checkEnhancementSettings(settings, part));
    const declared = usesExtension(settings) ? await this.declaredExtensions() : [];
    this.check(operation, checkEnhancementSettings(settings, part, declared));
  }

  /** The service's base URL (origin and path prefix); never the key. */
  get baseUrl(): string {
    return this.options.base;
  }

  /** v1: the service fetches the file at `file_download_url` and enhances it. Every field is required. */
  enhanceAudio(request: EnhanceJsonBody, options: CallOptions = {}): Promise<EnhanceAudioResult> {
    return this.guard(async () => {
      this.check('enhanceAudio', checkEnhanceJsonBody(request));
      const result = await this.transport.sendJson<EnhanceAudioResult>({
        endpoint: 'enhanceAudio',
        method: 'POST',
        path: PATHS.enhanceAudio,
        body: () => ({ body: JSON.stringify(request), headers: { 'content-type': 'application/json' } }),
        signal: this.signal(options.signal),
        onWait: options.onWait,
      });
      if (typeof result?.generated_name !== 'string')
        throw unexpectedAnswer('POST /v1/media/enhance-json', 'generated_name');
      return result;
    });
  }

  /** v1: uploads a video (path, Buffer or stream) and starts its enhancement. */
  enhanceVideo(request: EnhanceVideoRequest, options: TransferOptions = {}): Promise<VideoRecord> {
    return this.guard(async () => {
      const settings = request?.video_enhancement;
      await this.checkSettings('enhanceVideo', settings, 'video_enhancement');
      const record = await this.sendFile<VideoRecord>(
        'enhanceVideo',
        PATHS.enhanceVideo,
        request,
        'video_enhancement',
        settings,
        options,
      );
      this.poller.remember(record);
      return record;
    });
  }

  /** v2: uploads a media file (path, Buffer or stream); resolves with its metadata, `uid` included. */
  uploadMedia(request: UploadMediaRequest, options: TransferOptions = {}): Promise<MediaMetadata> {
    return this.guard(async () => {
      const settings = request?.media_enhancement;
      await this.checkSettings('uploadMedia', settings, 'media_enhancement');
      const answer = await this.sendFile<MediaMetadata & { media_uid?: string }>(
        'uploadMedia',
        PATHS.uploadMedia,
        request,
        'media_enhancement',
        settings,
        options,
      );
      // Services differ in what they call the id; the rest of the client speaks of `uid`.
      const metadata = { ...answer, uid: answer.uid ?? answer.media_uid } as MediaMetadata;
      this.poller.remember(metadata);
      return metadata;
    });
  }

  /** v2: the media's metadata, `enhancement_status` included. */
  getMetadata(uid: string, options: CallOptions = {}): Promise<MediaMetadata> {
    return this.guard(async () => {
      this.check('getMetadata', checkMediaUid(uid));
      const metadata = await this.transport.sendJson<MediaMetadata>({
        endpoint: 'getMetadata',
        method: 'GET',
        path: PATHS.metadata(uid),
        signal: this.signal(options.signal),
        onWait: options.onWait,
        mediaUid: uid,
      });
      this.poller.remember(metadata);
      return metadata;
    });
  }

  /**
   * The loudness over time of a media's input and output (a local-engine extension, not part of the
   * interface: docs/interface.md#loudness-report); null when it is not offered. Counts against the
   * `getMetadata` limit. Throws NOT_FOUND for an unknown media, NOT_READY while it is processed.
   *
   * Telling the answers apart: the built-in engine marks every answer of this route with the
   * `X-Loudness-Report` header. A 404 marked `unknown-media` is an unknown media; any other 404 (marked
   * `none`: the engine made no report for it; or unmarked: a service without the route) means not offered.
   */
  getLoudnessReport(uid: string, options: CallOptions = {}): Promise<LoudnessReport | null> {
    return this.guard(async () => {
      this.check('getLoudnessReport', checkMediaUid(uid));
      const spec = {
        endpoint: 'getMetadata',
        method: 'GET',
        path: LOUDNESS_REPORT_PATH(uid),
        signal: this.signal(options.signal),
        onWait: options.onWait,
        mediaUid: uid,
        readsAnswer: (res) =>
          res.statusCode === 404 && headerText(res.headers[LOUDNESS_REPORT_HEADER]) !== 'unknown-media',
      } satisfies RequestSpec;
      return this.transport.sendAndRead(spec, async (res) => {
        if (res.statusCode === 404) {
          await res.body.dump();
          return null;
        }
        const report = await readJson<LoudnessReport>(res, spec);
        if (!Array.isArray(report?.input?.short_term_lufs) || !Array.isArray(report?.output?.short_term_lufs))
          throw unexpectedAnswer(`GET ${LOUDNESS_REPORT_PATH(uid)}`, 'input/output.short_term_lufs');
        return report;
      });
    });
  }

  /**
   * Resolves with the metadata once the media is COMPLETED; rejects with JOB_FAILED when it fails,
   * TIMEOUT after `timeoutMs`, NOT_FOUND for an unknown uid. All waits of this client share one poller.
   */
  waitForCompletion(uid: string, options: WaitOptions = {}): Promise<MediaMetadata> {
    return this.guard(async () => {
      this.check('waitForCompletion', checkMediaUid(uid));
      // Node.js fires a timer longer than 2^31-1 ms at once, so a longer timeout would end the wait at once.
      if (options.timeoutMs !== undefined && !(options.timeoutMs > 0 && options.timeoutMs <= MAX_TIMER_MS)) {
        throw validationError('waitForCompletion', [
          {
            loc: ['timeoutMs'],
            msg: `must be a number of milliseconds from 1 to ${MAX_TIMER_MS}`,
            type: 'value_error',
            input: options.timeoutMs,
          },
        ]);
      }
      return this.poller.wait(uid, options);
    });
  }

  /** v2: the file as a stream, which the caller must read to the end or destroy. */
  downloadFile(uid: string, options: DownloadOptions = {}): Promise<DownloadedStream> {
    return this.guard(async () => {
      this.check('downloadFile', [...checkMediaUid(uid), ...checkStep(options.step)]);
      let slot: Slot | undefined;
      if (options.waitForPlace === false) {
        slot = this.limiters.downloadFile.tryAcquire();
        if (!slot)
          throw new MediaEnhanceError(
            'RATE_LIMITED',
            'downloadFile: no place free in the window now, or calls wait for one (waitForPlace: false)',
            { mediaUid: uid, retryable: true },
          );
      }
      return downloadStream(this.downloadContext(), uid, { ...options, signal: this.signal(options.signal) }, slot);
    });
  }

  /**
   * v2: the file written to `path` (a file path, or an existing folder to keep the service's file name).
   * Written to a temporary file and renamed when complete: on failure, no partial file is left.
   */
  downloadToFile(uid: string, path: string, options: DownloadOptions = {}): Promise<DownloadedFile> {
    return this.guard(async () => {
      const issues = [...checkMediaUid(uid), ...checkStep(options.step)];
      if (typeof path !== 'string' || path.length === 0)
        issues.push({ loc: ['path'], msg: 'a file or folder path is required', type: 'type_error.str', input: path });
      this.check('downloadToFile', issues);
      return downloadToFile(this.downloadContext(), uid, path, { ...options, signal: this.signal(options.signal) });
    });
  }

  /** Rate-limit state of an operation, as this client sees it. */
  rateLimit(endpoint: EndpointId): OperationLimitState {
    return this.limitState().operations.find((operation) => operation.id === endpoint)!;
  }

  /**
   * What this client knows of its limits now: per operation (in ENDPOINT_IDS order) the places used and
   * queued, the wait under way and the 429s seen since it started; and its status poller's media and next poll.
   */
  limitState(): LimitState {
    return {
      operations: this.rateLimitLog.operations((endpoint) => this.limiters[endpoint]),
      poller: { watching: this.poller.watching(), nextPollAt: this.poller.nextPollAt() },
    };
  }

  /**
   * Whether the rate limits are shared with other instances now: `off` without `sharedLimiter`,
   * `connecting` until Redis first answers, `unreachable` while each call uses the local limiter.
   */
  sharingState(): SharingState | 'connecting' | 'off' {
    return this.sharing?.current() ?? 'off';
  }

  /** Cancels every request and wait of this client and frees its connections. */
  async close(): Promise<void> {
    if (this.closing.signal.aborted) return;
    this.closing.abort(new MediaEnhanceError('ABORTED', 'the client was closed'));
    this.poller.close();
    for (const limiter of Object.values(this.limiters))
      limiter.rejectAll(new MediaEnhanceError('ABORTED', 'the client was closed'));
    await this.transport.close();
    await this.sharing?.close();
  }

  private async sendFile<T>(
    endpoint: 'enhanceVideo' | 'uploadMedia',
    path: string,
    request: EnhanceVideoRequest | UploadMediaRequest,
    part: 'video_enhancement' | 'media_enhancement',
    settings: EnhancementSettings | null | undefined,
    options: TransferOptions,
  ): Promise<T> {
    if (!request || typeof request !== 'object')
      throw validationError(endpoint, [
        { loc: ['request'], msg: 'an object with a file is required', type: 'type_error.dict', input: request },
      ]);
    const source = await fileSource(request.file, request.fileName);
    const fields = { [part]: settings ? JSON.stringify(settings) : undefined };
    const answer = await this.transport.sendJson<T & { uid?: string; media_uid?: string }>({
      endpoint,
      method: 'POST',
      path,
      body: () => multipartBody(source, fields, options.onProgress),
      replayable: source.replayable,
      signal: this.signal(options.signal),
      onWait: options.onWait,
    });
    if (typeof answer?.uid !== 'string' && typeof answer?.media_uid !== 'string')
      throw unexpectedAnswer(`POST ${path}`, 'uid');
    return answer;
  }

  private downloadContext(): DownloadContext {
    return { transport: this.transport, clock: this.clock, retry: this.options.retry, random: this.random };
  }

  /** The caller's signal joined with the client's own, so close() ends every request. */
  private signal(signal: AbortSignal | undefined): AbortSignal {
    return signal ? AbortSignal.any([signal, this.closing.signal]) : this.closing.signal;
  }

  private check(operation: string, issues: FieldIssue[]): void {
    if (this.closing.signal.aborted) throw new MediaEnhanceError('ABORTED', `the client was closed (${operation})`);
    if (issues.length > 0) throw validationError(operation, issues);
  }

  /** Every error leaves the client as a MediaEnhanceError without the key. */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const error =
        err instanceof MediaEnhanceError
          ? err
          : new MediaEnhanceError('HTTP', (err as Error)?.message ?? String(err), { cause: err });
      throw redactError(error, this.options.apiKey);
    }
  }
}

function unexpectedAnswer(what: string, field: string): MediaEnhanceError {
  return new MediaEnhanceError('HTTP', `the service's answer has no "${field}" (${what})`);
}
