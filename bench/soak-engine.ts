// The engine of the soak: the package's own CLI (media-enhance-engine, as installed) in a process of its
// own on a fixed loopback port, key and data dir, with faults on and small rate limits; started again on
// the same port and data dir after it is killed. Also what the engine itself says happened: its access
// log, and the media it accepted as kept in its data dir.
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { supervise, type RunningProcess } from './soak-processes';

/** Faults on every request and processing; `--fault-429` forces the next n rate-limited requests to 429 after each start. */
export const ENGINE_FAULTS = {
  '--fault-500': '0.05',
  '--fault-503': '0.05',
  '--fault-reset': '0.03',
  '--fault-drip': '0.05',
  '--fault-fail-processing': '0.05',
  '--fault-429': '5',
};

/**
 * A 10 s window with limits a steady 300 media in 6 minutes stays under, but bursts of dropped files,
 * and every new client (after a deploy or a restart) that does not yet know the engine's counts, meet.
 */
export const ENGINE_LIMITS = { windowMs: 10_000, upload: 12, metadata: 40, download: 30 };

export interface EngineSetup {
  cliPath: string;
  port: number;
  dataDir: string;
  key: string;
}

export async function startEngineProcess(
  setup: EngineSetup,
  logFile: string,
  timeoutMs = 30_000,
): Promise<RunningProcess> {
  const args = [
    setup.cliPath,
    '--port',
    String(setup.port),
    '--data-dir',
    setup.dataDir,
    '--window-ms',
    String(ENGINE_LIMITS.windowMs),
    '--limit-upload',
    String(ENGINE_LIMITS.upload),
    '--limit-metadata',
    String(ENGINE_LIMITS.metadata),
    '--limit-download',
    String(ENGINE_LIMITS.download),
    ...Object.entries(ENGINE_FAULTS).flat(),
  ];
  // The key in the environment, not on the command line, where any local user could read it.
  const child = spawn(process.execPath, args, {
    env: { ...process.env, MEDIA_ENHANCE_KEYS: setup.key },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const engine = supervise(child, logFile);
  const deadline = Date.now() + timeoutMs;
  while (!/engine listening on http:\/\/127\.0\.0\.1:\d+/.test(engine.output())) {
    if (!engine.alive() || Date.now() > deadline) {
      await engine.crash();
      throw new Error(`the engine did not start on port ${setup.port}:\n${engine.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return engine;
}

export interface EngineAnswers {
  /** By operation and status, e.g. `POST upload 201`. */
  counts: Map<string, number>;
  /** 429s forced by `--fault-429` (the first answers of rate-limited operations after each start), and the others. */
  forced429: number;
  real429: number;
}

/** Answers in the access logs (`... POST /v2/medias 201 12.5ms`), one log per start of the engine. */
export function countAnswers(logs: string[]): EngineAnswers {
  const counts = new Map<string, number>();
  let forced429 = 0;
  let real429 = 0;
  for (const log of logs) {
    // Injected 500/503 answers come before the rate limit; after them, the first answers of limited
    // operations are the forced 429s, until they are used up (or another answer shows they are).
    let forcedLeft = Number(ENGINE_FAULTS['--fault-429']);
    for (const match of log.matchAll(/^\S+ (GET|POST) (\S+) (\d{3}) /gm)) {
      const [, method, path, status] = match;
      const operation = path.startsWith('/v2/medias/')
        ? path.includes('/file')
          ? 'download'
          : 'metadata'
        : path === '/v2/medias'
          ? 'upload'
          : path;
      const key = `${method} ${operation} ${status}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (!['upload', 'metadata', 'download'].includes(operation) || status === '500' || status === '503') continue;
      if (status !== '429') {
        forcedLeft = 0;
      } else if (forcedLeft > 0) {
        forcedLeft--;
        forced429++;
      } else {
        real429++;
      }
    }
  }
  return { counts, forced429, real429 };
}

/**
 * When each media was last asked about (metadata or file), by uid, from the access logs: when the request
 * arrived (a line is written when the answer ends, `ms` after it arrived).
 */
export function lastRequests(logs: string[]): Map<string, number> {
  const last = new Map<string, number>();
  for (const log of logs) {
    for (const [, at, uid, ms] of log.matchAll(/^(\S+) GET \/v2\/medias\/([^/\s]+)\/\S* \d{3} ([\d.]+)ms$/gm)) {
      last.set(uid, Math.max(last.get(uid) ?? 0, Date.parse(at) - Number(ms)));
    }
  }
  return last;
}

export interface AcceptedMedia {
  uid: string;
  fileName: string;
  status: string;
  insertedAt: number;
  error?: { code: string; message: string };
  /** What the engine measured on its output (metadata `enhancement_params`), once COMPLETED. */
  output?: { loudnessLufs: number; truePeakDbtp: number; limiterReductionDb: number };
}

/** Every media the engine accepted (answered 201 for), as its data dir keeps them: one folder with meta.json each. */
export async function readAcceptedMedia(dataDir: string): Promise<AcceptedMedia[]> {
  const root = join(dataDir, 'media');
  const media: AcceptedMedia[] = [];
  for (const uid of await fsp.readdir(root).catch(() => [] as string[])) {
    if (uid.startsWith('.')) continue; // uploads in progress
    const text = await fsp.readFile(join(root, uid, 'meta.json'), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const meta = JSON.parse(text) as {
      uid: string;
      file_name: string;
      enhancement_status: string;
      inserted_at: string;
      error?: { code: string; message: string };
      enhancement_params?: {
        output_loudness_lufs?: number;
        output_true_peak_dbtp?: number;
        limiter_reduction_db?: number;
      };
    };
    const params = meta.enhancement_params;
    const output =
      typeof params?.output_loudness_lufs === 'number' && typeof params.output_true_peak_dbtp === 'number'
        ? {
            loudnessLufs: params.output_loudness_lufs,
            truePeakDbtp: params.output_true_peak_dbtp,
            limiterReductionDb: params.limiter_reduction_db ?? 0,
          }
        : undefined;
    media.push({
      uid: meta.uid,
      fileName: meta.file_name,
      status: meta.enhancement_status,
      insertedAt: Date.parse(meta.inserted_at),
      error: meta.error,
      output,
    });
  }
  return media;
}
