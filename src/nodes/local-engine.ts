// The built-in local engine of a config node: started in-process on a random loopback port with a
// random key, its media kept under Node-RED's user folder so a restart resumes them.
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { insideRoot } from '../contract/contained-path';
import type { EndpointId } from '../contract/endpoints';
import { startEngine, type EngineHandle, type EngineOptions, type EngineStorage } from '../engine';
import { adoptLegacyFolder, idSegment } from './id-segment';
import type { RuntimeSettings } from './red';
import type { Translate } from './texts';

/** The engine's options that Node-RED's settings.js may set under `mediaEnhance.engine` (all optional). */
export type EngineTuning = Partial<
  Pick<
    EngineOptions,
    | 'windowMs'
    | 'limits'
    | 'processingDelayMs'
    | 'workers'
    | 'workerIdleMs'
    | 'processorModule'
    | 'ffmpegPath'
    | 'ffmpegStallMs'
    | 'maxLimitingDb'
    | 'maxUploadBytes'
    | 'maxDecodedBytes'
    | 'dataDir'
    | 'retention'
    | 'storage'
    | 's3'
    | 'redis'
    | 'jobLockMs'
  >
>;

export interface LocalEngine {
  url: string;
  apiKey: string;
  windowMs?: number;
  limits: Partial<Record<EndpointId, number | null>>;
  /** Its media on disk, for the editor's sidebar. */
  storage: EngineStorage;
  close(): Promise<void>;
}

export function engineTuning(runtimeSettings: RuntimeSettings): EngineTuning {
  const section = runtimeSettings.mediaEnhance as { engine?: EngineTuning } | undefined;
  return section?.engine ?? {};
}

/** The folder holding every config node's engine data. */
function engineDataRoot(runtimeSettings: RuntimeSettings): string {
  return (
    engineTuning(runtimeSettings).dataDir ??
    join(runtimeSettings.userDir ?? join(homedir(), '.node-red'), 'media-enhance-data')
  );
}

/**
 * One data folder per config node, so two local engines never share a store: the id encoded into one
 * segment (id-segment.ts), and checked to lie inside the root, since the engine removes what it finds
 * there that is its own.
 */
export function engineDataDir(runtimeSettings: RuntimeSettings, configId: string): string {
  const root = engineDataRoot(runtimeSettings);
  return insideRoot(root, join(root, idSegment(configId)));
}

/**
 * What the engine of a config node runs with: its data folder, settings.js's `mediaEnhance.engine` and
 * the config node's limits. Two engines with the same key would behave the same (kept-engines.ts).
 */
export function engineSettingsKey(
  runtimeSettings: RuntimeSettings,
  configId: string,
  limits: Partial<Record<EndpointId, number>>,
): string {
  const sorted = Object.fromEntries(Object.entries(limits).sort(([a], [b]) => a.localeCompare(b)));
  return JSON.stringify({
    dataDir: engineDataDir(runtimeSettings, configId),
    tuning: engineTuning(runtimeSettings),
    limits: sorted,
  });
}

/**
 * The built-in engine serves this machine alone: no per-key quota to protect, so no window limits.
 * Its capacity is its worker pool, whose queue takes every accepted media in order (kept on disk);
 * settings.js (`mediaEnhance.engine.limits`) or the config node can still set any limit.
 */
export const BUILT_IN_LIMITS: Readonly<Record<EndpointId, number | null>> = {
  enhanceAudio: null,
  enhanceVideo: null,
  uploadMedia: null,
  getMetadata: null,
  downloadFile: null,
};

/** The longest a status request is held (the engine's idle timeout, 60 s, would cut a longer one). */
export const METADATA_WAIT_S = 30;

export async function startLocalEngine(
  runtimeSettings: RuntimeSettings,
  configId: string,
  limits: Partial<Record<EndpointId, number>>,
  t: Translate,
  log: (line: string) => void,
  /** Whether a deployed config node's id is encoded as this segment (its data folder is its own then). */
  claimed: (segment: string) => boolean = () => false,
  /** Told of each media the engine removed (retention, or the editor's removal). */
  onMediaRemoved: (uid: string) => void = () => undefined,
): Promise<LocalEngine> {
  // An earlier version named the folder differently for some ids (`svc:1` was `svc_1`): its media move along.
  adoptLegacyFolder(engineDataRoot(runtimeSettings), configId, claimed);
  // `dataDir` is the root of every config node's folder: the engine gets its own (engineDataDir) below.
  const tuning = engineTuning(runtimeSettings);
  const apiKey = randomBytes(24).toString('base64url');
  const merged = { ...BUILT_IN_LIMITS, ...tuning.limits, ...limits };
  const handle: EngineHandle = await startEngine({
    ...tuning,
    limits: merged,
    host: '127.0.0.1',
    port: 0,
    // Nodes hear of a finished media at once: status requests are held until the state changes.
    metadataWaitS: METADATA_WAIT_S,
    apiKeys: [apiKey],
    dataDir: engineDataDir(runtimeSettings, configId),
    onRemoved: ({ record, reason }) => {
      log(t('media-enhance-config.log.removed', { uid: record.uid, file: record.file_name, reason }));
      onMediaRemoved(record.uid);
    },
    // The engine's own errors (why a fetch failed, an answer it could not write) go to Node-RED's log.
    onErrorLine: (line) => log(t('media-enhance-config.log.engine', { line })),
  });
  return {
    url: handle.url,
    apiKey,
    windowMs: tuning.windowMs,
    limits: merged,
    storage: handle.storage,
    close: () => handle.close(),
  };
}
