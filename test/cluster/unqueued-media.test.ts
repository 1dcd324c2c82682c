// A media on record whose job never reached the queue (the queue failed between the two writes) is
// not lost: the instance holding the retention's turn adds its job, and it is processed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { followToEnd, getBytes, sha256, uploadWav } from './engine-cluster';

const mediaKey = (uid: string) => `media-enhance:engine:media:${uid}`;

describe('cluster: a media on record without its job', function () {
  this.timeout(30_000);
  let redis: TestRedis;
  let engine: TestEngine;

  before(async () => {
    redis = await startTestRedis();
    engine = await startTestEngine({
      redis: redis.url,
      apiKeys: ['cluster-test-key'],
      retention: { sweepIntervalMs: 200 },
    });
  });

  after(async () => {
    await engine?.dispose();
    await redis?.stop();
  });

  it('gets its job from the instance holding the retention turn, and completes', async () => {
    const wav = makeWav(1, 48_000);
    const first = await uploadWav(engine.url, wav);
    assert.equal((await followToEnd([engine.url], first.body.uid as string)).enhancement_status, 'COMPLETED');
    // A second media as an upload leaves it when the queue fails after its record is written.
    const client = new Redis(redis.url);
    const uid = randomUUID();
    try {
      const template = JSON.parse((await client.get(mediaKey(first.body.uid as string)))!) as Record<string, unknown>;
      const record = { ...template, uid, enhancement_status: 'PENDING', enhancement_params: {} };
      const folder = join(engine.dataDir, 'media', uid);
      await fsp.mkdir(folder);
      await fsp.writeFile(join(folder, 'input'), wav);
      await client.set(mediaKey(uid), JSON.stringify(record));
      await client.zadd('media-enhance:engine:media-index', Date.now(), uid);
    } finally {
      client.disconnect();
    }
    assert.equal((await followToEnd([engine.url], uid, 20_000)).enhancement_status, 'COMPLETED');
    assert.equal(sha256((await getBytes(`${engine.url}/v2/medias/${uid}/file?step=PRE`)).body), sha256(wav));
  });
});
