// Uploads of 1, 2, 4 and 8 client processes on one key, with and without sharing the limits through
// Redis: 429s seen, busiest rolling window against the limit, accepted uploads against the window's
// ceiling; then what an acquire costs through Redis on loopback, beside the local limiter.
import { join } from 'node:path';
import { systemClock } from '../src/client/clock';
import { RollingWindowLimiter, type WindowLimiter } from '../src/client/rate-limiter';
import { RedisWindowStore } from '../src/client/shared-limiter/redis-store';
import { SharedWindowLimiter } from '../src/client/shared-limiter/shared-window-limiter';
import { Sharing } from '../src/client/shared-limiter/sharing';
import { startTestEngine } from '../test/fixtures/test-engine';
import { isUpload, startWorker, windowReport } from '../test/client/shared-limiter-run';
import { startTestRedis, type TestRedis } from '../test/fixtures/redis-server';
import type { BenchReport } from './run';

const WINDOW_MS = 2_000;
const LIMITS = { uploadMedia: 12, getMetadata: 200 };
const RUN_MS = 20_000;
const PROCESS_COUNTS = [1, 2, 4, 8];
const ACQUIRES = 2_000;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function uploadsRow(redis: TestRedis, processes: number, shared: boolean): Promise<string[]> {
  const engine = await startTestEngine({
    windowMs: WINDOW_MS,
    limits: LIMITS,
    processorModule: join(__dirname, '../src/engine/processors/copy-processor.js'),
    workers: 1,
  });
  try {
    const results = await Promise.all(
      Array.from(
        { length: processes },
        () =>
          startWorker(
            {
              baseUrl: engine.url,
              apiKey: engine.apiKey,
              redisUrl: shared ? redis.url : undefined,
              windowMs: WINDOW_MS,
              limits: LIMITS,
              durationMs: RUN_MS,
              lanes: 4,
            },
            180_000,
          ).done,
      ),
    );
    const log = engine.requests();
    const uploads = windowReport(log, isUpload, WINDOW_MS);
    const start = Math.min(...log.filter((r) => isUpload(r.path)).map((r) => r.at));
    const inRun = log.filter((r) => isUpload(r.path) && r.status !== 429 && r.at < start + RUN_MS).length;
    const ceiling = (LIMITS.uploadMedia * RUN_MS) / WINDOW_MS;
    const counts = results.map((r) => r.uploads);
    return [
      String(processes),
      shared ? 'Redis' : 'own windows',
      String(uploads.rejected429),
      `${uploads.busiestWindow} / ${LIMITS.uploadMedia}`,
      `${((inRun * 60_000) / RUN_MS).toFixed(0)} / ${((ceiling * 60_000) / RUN_MS).toFixed(0)} = ${(inRun / ceiling).toFixed(2)}`,
      processes > 1 ? (Math.max(...counts) / Math.min(...counts)).toFixed(2) : '-',
    ];
  } finally {
    await engine.dispose();
  }
}

/** Milliseconds per acquire (then settle), one after another, with room in the window. */
async function acquireTimes(limiter: WindowLimiter): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < ACQUIRES; i++) {
    const started = process.hrtime.bigint();
    const slot = await limiter.acquire();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    slot.settle();
  }
  return times;
}

export async function run(): Promise<BenchReport> {
  const redis = await startTestRedis();
  try {
    const table = [
      ['processes', 'limits', '429s', 'busiest window / limit', 'uploads per minute / ceiling', 'most / least'],
    ];
    for (const processes of PROCESS_COUNTS) {
      for (const shared of [false, true]) {
        console.error(`  ${processes} processes, ${shared ? 'Redis' : 'own windows'} ...`);
        table.push(await uploadsRow(redis, processes, shared));
      }
    }
    const local = await acquireTimes(new RollingWindowLimiter(1_000_000, 60_000, systemClock));
    const sharing = new Sharing(new RedisWindowStore({ redisUrl: redis.url, keyPrefix: 'bench' }, 'bench-key'));
    await sharing.inUse();
    const viaRedis = await acquireTimes(
      new SharedWindowLimiter(
        'getMetadata',
        new RollingWindowLimiter(1_000_000, 60_000, systemClock),
        sharing,
        systemClock,
      ),
    );
    await sharing.close();
    const ms = (v: number) => `${v.toFixed(3)} ms`;
    return {
      title: `Shared limits: uploads of 1-8 processes on one key, limit ${LIMITS.uploadMedia} per ${WINDOW_MS / 1000} s window, ${RUN_MS / 1000} s each`,
      table,
      notes: [
        'Each process uploads with 4 uploads under way and waits for each media; the engine counts a true rolling window.',
        '"uploads per minute / ceiling": uploads the engine accepted in the run, per minute, against the most the window allows.',
        '"most / least": uploads of the busiest process against the least busy one.',
        `Acquire (then settle), ${ACQUIRES} one after another with room in the window: local limiter p50 ${ms(percentile(local, 50))}, p99 ${ms(percentile(local, 99))}; through Redis on loopback p50 ${ms(percentile(viaRedis, 50))}, p99 ${ms(percentile(viaRedis, 99))}.`,
      ],
    };
  } finally {
    await redis.stop();
  }
}
