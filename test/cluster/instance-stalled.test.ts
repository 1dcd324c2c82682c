// An instance that stands still mid-job past its lock (SIGSTOP, as a paused VM or a swapped-out machine)
// while the instances share a data folder: the other takes the job over, and when the first wakes up it
// learns it lost the job and stops without writing. The media ends COMPLETED once, by the instance that
// holds the job, with a whole output; the first run's work files never meet the second's.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { readUntil } from '../fixtures/read-until';
import { CHANGES_CHANNEL } from '../../src/engine/cluster/redis-records';
import { KEY_PREFIX } from '../../src/engine/cluster/redis-connection';
import {
  EngineCluster,
  followToEnd,
  getBytes,
  getJson,
  secondsOf,
  sharedFolder,
  tempFolder,
  uploadWav,
  type EngineInstance,
} from './engine-cluster';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const PROCESSING_DELAY_MS = 6_000;

describe('cluster: an instance that stands still mid-job past its lock', function () {
  this.timeout(120_000);
  let redis: TestRedis;
  let cluster: EngineCluster;
  let data: ReturnType<typeof tempFolder>;
  let listener: Redis;
  /** Every change of state told on the channel, as "<uid> <state>". */
  const told: string[] = [];

  before(async () => {
    redis = await startTestRedis();
    listener = new Redis(redis.url);
    listener.on('message', (_channel: string, message: string) => told.push(message));
    await listener.subscribe(CHANGES_CHANNEL);
    data = tempFolder('cluster-stalled-');
    cluster = new EngineCluster({
      redisUrl: redis.url,
      storage: sharedFolder(join(data.path, 'data')),
      // Each job waits 6 s in PROCESSING before its work: the first instance is stopped inside that wait.
      args: ['--workers', '1', '--processing-delay-ms', String(PROCESSING_DELAY_MS), '--job-lock-ms', '1000'],
    });
    await cluster.add();
    await cluster.add();
  });

  after(async () => {
    for (const instance of cluster?.instances ?? []) instance.resume();
    listener?.disconnect();
    await cluster?.stop();
    await redis?.stop();
    data?.remove();
  });

  /** The engine named in the media's record: the one that last set it PROCESSING, or ended it. */
  async function engineOf(uid: string): Promise<string | undefined> {
    const redisClient = new Redis(redis.url);
    try {
      const value = await redisClient.get(`${KEY_PREFIX}:media:${uid}`);
      return (JSON.parse(value ?? '{}') as { internal?: { engine?: string } }).internal?.engine;
    } finally {
      redisClient.disconnect();
    }
  }

  const runsOf = (name: string) => (instance: EngineInstance) => name.split('/')[1] === String(instance.pid);

  it('the other instance finishes the job; the first, woken, writes nothing, and the media ends COMPLETED once', async () => {
    const original = makeWav(2, 48_000);
    const upload = await uploadWav(cluster.instances[0].url, original);
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    const uid = upload.body.uid as string;
    const processing = await readUntil(
      () => engineOf(uid),
      (engine) => engine !== undefined,
      'an instance taking the job',
    );
    const stalled = cluster.instances.find(runsOf(processing!))!;
    const other = cluster.instances.find((instance) => instance !== stalled)!;
    const stoppedAt = Date.now();
    stalled.pause(); // inside its 6 s wait
    const takeover = await readUntil(
      () => other.errors(),
      (text) => text.includes(`media ${uid}: taken over from engine ${processing}`),
      'the other instance taking the job over',
    );
    assert.match(takeover, /the work starts over on this engine/);
    // Woken once its own wait is over and the other's is not: on its own, it would write its result first.
    await sleep(Math.max(0, stoppedAt + PROCESSING_DELAY_MS + 500 - Date.now()));
    stalled.resume();
    await readUntil(
      () => stalled.errors(),
      (text) => text.includes(`media ${uid}: another engine has taken this job over`),
      'the woken instance saying it lost the job',
    );

    const ended = await followToEnd([stalled.url, other.url], uid);
    assert.equal(ended.enhancement_status, 'COMPLETED', JSON.stringify(ended));
    const finisher = await engineOf(uid);
    assert.ok(finisher && runsOf(finisher)(other), `ended by ${finisher}, not by the instance holding the job`);
    const enhanced = await getBytes(`${other.url}/v2/medias/${uid}/file`);
    assert.equal(enhanced.status, 200);
    assert.ok(Math.abs((await secondsOf(enhanced.body, data.path)) - 2) < 0.01, 'the output holds every second');
    await sleep(500); // the last messages on their way
    assert.deepEqual(
      told.filter((message) => message.startsWith(`${uid} `)), // changes of state (progress is told as the uid alone)
      [`${uid} PROCESSING`, `${uid} COMPLETED`],
      'no FAILED, COMPLETED once',
    );
    // Neither run left work files behind.
    await readUntil(
      () => fsp.readdir(join(data.path, 'data', 'media', uid)),
      (names) => names.every((name) => !name.startsWith('.run-') && !name.startsWith('output.')),
      'the runs removing their work files',
    );
    assert.equal((await getJson(`${stalled.url}/v2/medias/${uid}/metadata`)).body.enhancement_status, 'COMPLETED');
  });
});
