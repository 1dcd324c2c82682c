// The engine as several instances on one Redis: jobs per minute with 1, 2 and 3 instances (one worker
// thread each, FINCH, short files) against one instance without Redis, and the seconds from a kill -9
// of an instance until its job runs again on another.
import { cpus } from 'node:os';
import { join } from 'node:path';
import { makeWav } from '../test/fixtures/media';
import { startTestRedis } from '../test/fixtures/redis-server';
import {
  EngineCluster,
  followToEnd,
  getJson,
  sharedFolder,
  tempFolder,
  uploadWav,
} from '../test/cluster/engine-cluster';
import type { BenchReport } from './run';

const JOBS = 30;
const SECONDS = 10;
const LOCK_MS = 5_000;

/** Jobs per minute of `instances` engines (with Redis, or one without when `redisUrl` is undefined). */
async function jobsPerMinute(instances: number, redisUrl: string | undefined): Promise<number> {
  const data = tempFolder('bench-cluster-');
  const cluster = new EngineCluster({
    redisUrl,
    storage: sharedFolder(join(data.path, 'data')),
    args: ['--workers', '1', '--quiet', '--limit-upload', '1000', '--limit-metadata', '100000'],
  });
  try {
    for (let i = 0; i < instances; i++) await cluster.add();
    const urls = cluster.instances.map((i) => i.url);
    const wav = makeWav(SECONDS, 48_000);
    const started = Date.now();
    const uploads = await Promise.all(Array.from({ length: JOBS }, (_, i) => uploadWav(urls[i % urls.length], wav)));
    for (const u of uploads) if (u.status !== 201) throw new Error(`upload: ${u.status} ${JSON.stringify(u.body)}`);
    await Promise.all(uploads.map((u) => followToEnd(urls, u.body.uid as string, 600_000)));
    return JOBS / ((Date.now() - started) / 60_000);
  } finally {
    await cluster.stop();
    data.remove();
  }
}

/** Seconds from the kill -9 of the instance holding a job until another runs it again. */
async function takeOverSeconds(redisUrl: string): Promise<number> {
  const data = tempFolder('bench-cluster-kill-');
  const cluster = new EngineCluster({
    redisUrl,
    storage: sharedFolder(join(data.path, 'data')),
    args: [
      '--workers',
      '1',
      '--quiet',
      '--limit-upload',
      '1000',
      '--limit-metadata',
      '100000',
      '--processing-delay-ms',
      '30000',
      '--job-lock-ms',
      String(LOCK_MS),
    ],
  });
  try {
    const a = await cluster.add();
    const upload = await uploadWav(a.url, makeWav(1, 48_000));
    if (upload.status !== 201) throw new Error(`upload: ${upload.status} ${JSON.stringify(upload.body)}`);
    const uid = upload.body.uid as string;
    const deadline = Date.now() + 120_000;
    let first: Record<string, unknown>;
    for (;;) {
      first = (await getJson(`${a.url}/v2/medias/${uid}/metadata`)).body;
      if (first.enhancement_status === 'PROCESSING') break;
      if (Date.now() > deadline) throw new Error(`the job did not start: ${JSON.stringify(first)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const b = await cluster.add(); // idle: only a lapsed lock gives it the job
    await a.kill9();
    const killed = Date.now();
    for (;;) {
      const now = (await getJson(`${b.url}/v2/medias/${uid}/metadata`)).body;
      if (now.updated_at === undefined) throw new Error(`no metadata: ${JSON.stringify(now)}`);
      if (now.updated_at !== first.updated_at) return (Date.now() - killed) / 1000;
      if (Date.now() > deadline) throw new Error('the job was not taken up');
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await cluster.stop();
    data.remove();
  }
}

export async function run(): Promise<BenchReport> {
  const redis = await startTestRedis();
  try {
    const reference = await jobsPerMinute(1, undefined);
    const rows: string[][] = [['engines', 'jobs per minute', 'against one engine without Redis']];
    rows.push(['1, no Redis (reference)', reference.toFixed(1), '1.00']);
    for (const instances of [1, 2, 3]) {
      const rate = await jobsPerMinute(instances, redis.url);
      rows.push([`${instances} on Redis`, rate.toFixed(1), (rate / reference).toFixed(2)]);
    }
    // A Redis of its own: BullMQ's stalled check runs once per interval across instances, and the key that
    // says so, left by the instances above (30 s interval), would hold this one's check back.
    const own = await startTestRedis();
    const takeOver = await takeOverSeconds(own.url).finally(() => own.stop());
    rows.push([
      `kill -9 mid-job, --job-lock-ms ${LOCK_MS}`,
      `runs again after ${takeOver.toFixed(1)} s`,
      `${(takeOver / (LOCK_MS / 1000)).toFixed(2)} x the lock`,
    ]);
    return {
      title: 'Several instances on one Redis',
      table: rows,
      notes: [
        `${JOBS} jobs of ${SECONDS} s WAV (FINCH), uploaded at once round robin, one worker thread per engine, one data folder, one redis-server on loopback; every process on this machine's cores.`,
        `This machine has ${cpus().length} cores: past that many engines the gain flattens, and the ratio of one engine on Redis is what sharing costs.`,
        "The take-over time is the lock lapsing (--job-lock-ms) plus BullMQ's stalled-job check (run every --job-lock-ms): between one and two locks.",
      ],
      writtenAlone: true,
    };
  } finally {
    await redis.stop();
  }
}
