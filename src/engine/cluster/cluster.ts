// The engine's shared parts when instances share the work through Redis (`--redis`): records, the job
// queue, the rate-limit windows and the retention's turn, and the health probe for /healthz.
import type { Health } from '../http/health';
import type { Jobs } from '../jobs/jobs';
import { withoutPassword, type ResolvedEngineOptions } from '../options';
import type { SharedRetention } from '../storage/retention';
import type { MediaFiles } from '../storage/media-files';
import { QueueJobs } from './queue-jobs';
import { connected, REDIS_PART } from './redis-connection';
import { RedisRateLimits } from './redis-rate-limits';
import { RedisRecords } from './redis-records';
import { RetentionTurn } from './retention-turn';

/** How long a start waits for Redis before it gives up with an error. */
const CONNECT_WAIT_MS = 10_000;

export interface Cluster {
  records: RedisRecords;
  limits: RedisRateLimits;
  /** The retention's turn (its holder also requeues unqueued media) and the uses every instance saw. */
  retention: SharedRetention;
  /** Redis's time (ms since the epoch): the one clock of every time the retention compares. */
  clock: () => number;
  /** The shared queue, its worker running `jobs` here. */
  startJobs(jobs: Jobs): QueueJobs;
}

export async function startCluster(
  config: ResolvedEngineOptions,
  files: MediaFiles,
  health: Health,
  logError: (line: string) => void,
): Promise<Cluster> {
  const url = config.redis!;
  const { maxAgeMs } = config.retention;
  const useWriteEveryMs = Math.min(30_000, maxAgeMs === null ? Infinity : maxAgeMs / 10);
  const records = new RedisRecords(url, files, useWriteEveryMs, config.clock, logError);
  const redis = records.connection;
  const clock = records.clock;
  const now = () => clock.now();
  try {
    await connected(redis, CONNECT_WAIT_MS);
    await clock.sync();
  } catch {
    await records.close();
    throw new Error(`redis: cannot reach ${String(withoutPassword(url))} within ${CONNECT_WAIT_MS / 1000} s`);
  }
  health.add({
    name: REDIS_PART,
    probe: async () => {
      if ((await redis.ping()) !== 'PONG') throw new Error('redis: no PONG');
    },
    up: () => redis.status === 'ready',
  });
  const turn = new RetentionTurn(redis, Math.max(2 * config.retention.sweepIntervalMs, 30_000));
  let queue: QueueJobs | undefined;
  return {
    records,
    limits: new RedisRateLimits(redis, config.apiKeys, config.limits, config.windowMs),
    retention: {
      mayRemove: async () => {
        // The sweep compares times on Redis's clock: measured again first (nobody sweeps while Redis is away).
        const synced = await clock.sync().then(
          () => true,
          () => false,
        );
        if (!synced) return false;
        const mine = await turn.take();
        if (mine)
          void queue
            ?.requeueUnfinished()
            .catch((err: Error) => logError(`requeueing unfinished media stopped: ${err.message}`));
        return mine;
      },
      noteUse: (uid, at) => records.noteUse(uid, at),
      uses: () => records.uses(),
      release: () => turn.release(),
    },
    clock: now,
    startJobs(jobs) {
      queue = new QueueJobs(
        redis,
        records,
        jobs,
        { url, concurrency: config.workers, lockDurationMs: config.jobLockMs },
        logError,
      );
      return queue;
    },
  };
}
