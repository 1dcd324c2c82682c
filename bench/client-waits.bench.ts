// 200 concurrent waits against a shrunken (6 s) window: 429s seen, status requests per window against
// the limit, and how long after a job completes its wait resolves, against the lower bound the budget allows.
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaEnhanceClient } from '../src';
import { startEngine } from '../src/engine';
import { makeWav } from '../test/fixtures/media';
import type { BenchReport } from './run';

const JOBS = 200;
const WINDOW_MS = 6_000;
const LIMIT = 120; // the interface's metadata limit, per (shrunken) window
const UPLOAD_SPACING_MS = 50;
const PROCESSING_MS = 30_000;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export async function run(): Promise<BenchReport> {
  const dir = await fsp.mkdtemp(join(tmpdir(), 'me-bench-waits-'));
  const apiKey = 'bench-key';
  const log: { at: number; path: string; status: number }[] = [];
  const engine = await startEngine({
    port: 0,
    apiKeys: [apiKey],
    dataDir: dir,
    windowMs: WINDOW_MS,
    limits: { uploadMedia: 10_000, getMetadata: LIMIT },
    processingDelayMs: PROCESSING_MS,
    onRequest: (entry) => log.push({ at: entry.at, path: entry.path, status: entry.status }),
  });
  const client = new MediaEnhanceClient({
    baseUrl: engine.url,
    apiKey,
    windowMs: WINDOW_MS,
    limits: { uploadMedia: 10_000 },
  });
  try {
    // Uploads spread over 10 s, so jobs complete spread over 10 s too, all 200 waiting in between.
    const media: { uid: string }[] = [];
    const waits: Promise<unknown>[] = [];
    const resolvedAt = new Map<string, number>();
    for (let i = 0; i < JOBS; i++) {
      const m = await client.uploadMedia({ file: makeWav(0.1, 8_000), fileName: `job${i}.wav` });
      media.push(m);
      waits.push(client.waitForCompletion(m.uid).then(() => resolvedAt.set(m.uid, Date.now())));
      await new Promise((resolve) => setTimeout(resolve, UPLOAD_SPACING_MS));
    }
    const started = Date.now();
    await Promise.all(waits);
    const finished = Date.now();

    // When each job really completed, as the engine recorded it.
    const completedAt = new Map<string, number>();
    for (const m of media) completedAt.set(m.uid, Date.parse(String((await client.getMetadata(m.uid)).updated_at)));
    const delays = media.map((m) => resolvedAt.get(m.uid)! - completedAt.get(m.uid)!);

    // Lower bound: with n jobs waiting and LIMIT polls per window, a job is asked at best every n*W/LIMIT
    // (and never more often than the 3 s the interface asks for), so it learns of completion on average half that late.
    const bound = media.map((m) => {
      const waiting = media.filter((o) => resolvedAt.get(o.uid)! >= completedAt.get(m.uid)!).length;
      return Math.max(3_000, (waiting * WINDOW_MS) / LIMIT) / 2;
    });

    // Windows while every job still waits: from the last upload until the first job completes.
    const firstCompletion = Math.min(...completedAt.values());
    const metadata = log.filter((r) => r.path.endsWith('/metadata'));
    const windows: number[] = [];
    for (let t = started; t + WINDOW_MS <= finished; t += 500)
      windows.push(metadata.filter((r) => r.at >= t && r.at < t + WINDOW_MS).length);
    const busyWindows: number[] = [];
    for (let t = started; t + WINDOW_MS <= firstCompletion; t += 500)
      busyWindows.push(metadata.filter((r) => r.at >= t && r.at < t + WINDOW_MS).length);
    const rejected = log.filter((r) => r.status === 429).length;
    return {
      title: `${JOBS} concurrent waits, metadata limit ${LIMIT} per ${WINDOW_MS / 1000} s window`,
      table: [
        ['measure', 'value', 'reference', 'ratio', 'goal'],
        ['429 answers seen', String(rejected), '0', '', '0'],
        [
          'status requests in the busiest window',
          String(Math.max(...windows)),
          `${LIMIT} (limit)`,
          (Math.max(...windows) / LIMIT).toFixed(2),
          '<= 1.0',
        ],
        [
          'status requests per window while all jobs wait (lowest)',
          String(Math.min(...busyWindows)),
          `${LIMIT} (limit)`,
          (Math.min(...busyWindows) / LIMIT).toFixed(2),
          '>= 0.9',
        ],
        [
          'completion-to-resolve delay p50',
          `${(percentile(delays, 50) / 1000).toFixed(1)} s`,
          `${(percentile(bound, 50) / 1000).toFixed(1)} s`,
          (percentile(delays, 50) / percentile(bound, 50)).toFixed(2),
          'close to 1',
        ],
        [
          'completion-to-resolve delay p95',
          `${(percentile(delays, 95) / 1000).toFixed(1)} s`,
          `${(percentile(bound, 95) / 1000).toFixed(1)} s`,
          (percentile(delays, 95) / percentile(bound, 95)).toFixed(2),
          'close to 1',
        ],
      ],
      notes: [
        'The reference for the delay is the lower bound the budget allows: half the interval at which each waiting job can be asked.',
      ],
    };
  } finally {
    await client.close();
    await engine.close();
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
