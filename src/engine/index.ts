import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { KeyChecker } from './http/auth';
import { accessLogLine } from './http/access-log';
import { Capacity } from './http/capacity';
import { Faults } from './faults';
import { FetchGuard } from './jobs/fetch-guard';
import { Jobs } from './jobs/jobs';
import { resolveEngineOptions, type EngineOptions } from './options';
import { RateLimits } from './http/rate-limit';
import { diskUse, type DiskUse } from './storage/disk-use';
import { MediaRetention, type RetentionOptions } from './storage/retention';
import { createEngineServer } from './http/server';
import { DecodedRoom } from './http/decoded-room';
import { WorkerPool } from './jobs/worker-pool';
import { Health } from './http/health';
import { DiskRecords } from './storage/disk-records';
import { LocalMediaFiles } from './storage/local-media-files';
import { startCluster } from './cluster/cluster';
import { engineName } from './cluster/engine-name';
import { ffmpegAvailable } from '../audio/ffmpeg';

export type { EngineOptions } from './options';
export type { AccessLogEntry } from './http/access-log';
export type { ServerLimits } from './http/server-limits';
export type { FaultOptions } from './faults';
export type { RemovedMedia, RetentionOptions } from './storage/retention';
export type { DiskUse } from './storage/disk-use';
export type { Processor, ProcessJob, ProcessResult, ProcessSettings } from './processors/processor';
export { ProcessingError } from './processors/processor';

export interface EngineStorage {
  use(): Promise<DiskUse>;
  /** Removes the finished media now, except those in `keep`. */
  removeFinished(keep?: ReadonlySet<string>): Promise<{ removed: number; bytes: number }>;
  /** The rule that removes finished media on its own. */
  retention: RetentionOptions;
  /** Resolves when the storage of media files answers (a health check); rejects with the reason when not. */
  ping(): Promise<void>;
}

export interface EngineHandle {
  /** Base URL of the engine, e.g. `http://127.0.0.1:43117`. */
  url: string;
  port: number;
  /** The media on disk, and their removal: for the editor's sidebar (not part of the interface). */
  storage: EngineStorage;
  /** Stops accepting requests, ends open connections and stops processing; unfinished media resume on the next start. */
  close(): Promise<void>;
}

/** Starts the local engine: the media enhancement service interface, on loopback by default. */
export async function startEngine(options: EngineOptions): Promise<EngineHandle> {
  const config = resolveEngineOptions(options);
  const logError = (line: string) => {
    try {
      config.onErrorLine(line);
    } catch {
      // the error log is the last resort: if it fails too, nothing is left to tell
    }
  };
  const mediaRoot = join(config.dataDir, 'media');
  // The AWS SDK is loaded only for an engine that uses S3: the others neither wait for it nor hold it.
  const s3Files = config.storage
    ? new (await import('./storage/s3-media-files')).S3MediaFiles(
        config.storage.location,
        config.storage.s3,
        config.dataDir,
      )
    : undefined;
  // With Redis the records are shared (cluster/), and so is the data folder when the files are kept there.
  const files = s3Files ?? new LocalMediaFiles(mediaRoot, config.redis !== undefined);
  await files.open();
  const diskRecords = config.redis ? undefined : new DiskRecords(mediaRoot, files, logError);
  const resumable = (await diskRecords?.open()) ?? [];
  const faults = new Faults(config.faults);
  const fetchGuard = new FetchGuard({ allowPrivate: config.allowPrivateFetch, allowFrom: config.allowFetchFrom });
  const pool = new WorkerPool(
    config.workers,
    config.processorModule,
    {
      ffmpegPath: config.ffmpegPath,
      ffmpegStallMs: config.ffmpegStallMs,
      maxDecodedBytes: config.maxDecodedBytes,
      maxLimitingDb: config.maxLimitingDb,
    },
    { idleMs: config.workerIdleMs },
  );
  const health = new Health();
  // Told in /healthz: an instance without ffmpeg serves WAV only (with others, it leaves the rest to them).
  const hasFfmpeg = await ffmpegAvailable(config.ffmpegPath);
  health.tell('ffmpeg', hasFfmpeg);
  // Files in S3 are shared too: a load balancer should know when they cannot be reached.
  if (s3Files) health.add({ name: 'storage', probe: () => s3Files.ping(), up: () => true });
  // With Redis, the records, jobs, limits and the retention's turn are shared by every instance.
  const cluster = config.redis ? await startCluster(config, files, health, logError) : undefined;
  const records = cluster?.records ?? diskRecords!;
  const retention = new MediaRetention(
    records,
    files,
    config.retention,
    config.onRemoved,
    // Shared media: one clock (Redis's) for every time the retention compares, whatever this machine's says.
    cluster?.clock ?? config.clock,
    cluster?.retention,
    logError,
  );
  const jobs = new Jobs(
    records,
    files,
    pool,
    faults,
    {
      ...config,
      // As the paths under it are written (a message never names the data folder).
      dataDir: dirname(mediaRoot),
      fetchGuard,
      onErrorLine: logError,
      leaveWhatNeedsFfmpeg: cluster !== undefined && !hasFfmpeg,
      ...(cluster ? { engineName: engineName() } : {}),
    },
    () => void retention.sweep(),
  );
  const starter = cluster?.startJobs(jobs) ?? jobs;
  if (cluster && !hasFfmpeg)
    logError(`ffmpeg not found ("${config.ffmpegPath}"): media other than WAV are left to instances that have it`);
  const server = createEngineServer({
    keys: new KeyChecker(config.apiKeys),
    limits: cluster?.limits ?? new RateLimits(config.limits, config.windowMs),
    faults,
    capacity: new Capacity(
      config.server.maxConnections,
      config.server.maxUploadsPerKey,
      config.server.maxConnectionsPerClient,
      config.server.maxHeldWaitsPerKey,
    ),
    serverLimits: config.server,
    logError,
    health,
    routes: {
      files,
      records,
      jobs: starter,
      faults,
      retention,
      maxUploadBytes: config.maxUploadBytes,
      room: new DecodedRoom({
        dataDir: config.dataDir,
        ffmpegPath: config.ffmpegPath,
        maxDecodedBytes: config.maxDecodedBytes,
      }),
      metadataWaitS: config.metadataWaitS,
    },
    log: (entry) => {
      config.onRequest?.(entry);
      config.onLogLine?.(accessLogLine(entry));
    },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    // Nothing was served: the shared connections (and the workers) must not keep the process alive.
    await starter.close();
    await records.close();
    throw err;
  }
  for (const record of resumable) jobs.start(record);
  retention.start();
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    storage: {
      use: () => diskUse(records, files),
      removeFinished: (keep) => retention.removeFinished(keep),
      ping: () => files.ping(),
      retention: { ...config.retention },
    },
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
        await starter.close();
        await retention.close();
        await records.close();
        files.close();
        await fetchGuard.close();
      })()),
  };
}
