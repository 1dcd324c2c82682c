// Records in Redis that no engine wrote (damaged, hostile, huge): each is skipped and told once in the
// error log, and the retention and the requeueing go on for every other media.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { followToEnd, getJson, tempFolder, uploadWav } from './engine-cluster';

const mediaKey = (uid: string) => `media-enhance:engine:media:${uid}`;
const INDEX = 'media-enhance:engine:media-index';

describe('cluster: bad records in the shared state', function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let client: Redis;
  let data: ReturnType<typeof tempFolder>;
  let engine: TestEngine;
  const removed: string[] = [];
  const notJson = randomUUID();
  const huge = randomUUID();
  const traversal = '../../../victimdir';

  before(async () => {
    redis = await startTestRedis();
    client = new Redis(redis.url);
    data = tempFolder('cluster-bad-records-');
    mkdirSync(join(data.path, 'victimdir'));
    const at = Date.now() - 3600_000;
    await client.set(mediaKey(notJson), 'not json {');
    await client.set(
      mediaKey(traversal),
      JSON.stringify({ uid: traversal, enhancement_status: 'COMPLETED', updated_at: new Date(at).toISOString() }),
    );
    // 64 MiB of one record: an instance reading it whole would hold it (and its parse) at every sweep.
    const filler = 'x'.repeat(64 * 1024 ** 2);
    await client.set(
      mediaKey(huge),
      JSON.stringify({ uid: huge, enhancement_status: 'COMPLETED', updated_at: new Date(at).toISOString(), filler }),
    );
    await client.zadd(INDEX, at, notJson, at, traversal, at, huge);
    engine = await startTestEngine(
      {
        redis: redis.url,
        apiKeys: ['cluster-test-key'],
        workers: 1,
        // Finished media go 1 s after their last use; checked every 0.2 s.
        retention: { maxAgeMs: 1000, graceMs: 0, sweepIntervalMs: 200 },
        onRemoved: ({ record }) => removed.push(record.uid),
      },
      join(data.path, 'data'),
    );
  });

  after(async () => {
    await engine?.dispose();
    client?.disconnect();
    await redis?.stop();
    data?.remove();
  });

  it('removes finished media as ever, and tells of each bad record once', async () => {
    const upload = await uploadWav(engine.url, makeWav(0.5, 16_000));
    const uid = upload.body.uid as string;
    assert.equal((await followToEnd([engine.url], uid)).enhancement_status, 'COMPLETED');
    const deadline = Date.now() + 15_000;
    while (!removed.includes(uid)) {
      assert.ok(Date.now() < deadline, `the finished media was not removed; errors: ${engine.errorLines.join('\n')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal((await getJson(`${engine.url}/v2/medias/${uid}/metadata`)).status, 404);
    // Nothing of the bad records was removed by the engine: they stay for a person to look at.
    assert.deepEqual(removed, [uid]);
    assert.equal(await client.exists(mediaKey(notJson), mediaKey(traversal), mediaKey(huge)), 3);
    assert.ok(existsSync(join(data.path, 'victimdir')), 'no folder outside the data folder was touched');
    for (const bad of [notJson, traversal, huge]) {
      const told = engine.errorLines.filter((line) => line.includes(bad));
      assert.equal(told.length, 1, `record ${bad} is told once: ${engine.errorLines.join('\n')}`);
    }
  });

  it('still requeues a media on record without its job', async () => {
    const wav = makeWav(0.5, 16_000);
    const first = await uploadWav(engine.url, wav);
    const template = JSON.parse((await client.get(mediaKey(first.body.uid as string)))!) as Record<string, unknown>;
    const uid = randomUUID();
    const folder = join(data.path, 'data', 'media', uid);
    mkdirSync(folder);
    writeFileSync(join(folder, 'input'), wav);
    await client.set(mediaKey(uid), JSON.stringify({ ...template, uid, enhancement_status: 'PENDING' }));
    await client.zadd(INDEX, Date.now(), uid);
    assert.equal((await followToEnd([engine.url], uid, 20_000)).enhancement_status, 'COMPLETED');
  });
});
