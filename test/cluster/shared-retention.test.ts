// Retention over instances sharing the media: one instance at a time removes what is due, each media
// once, from Redis and from the data folder alike.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { EngineCluster, followToEnd, getJson, sharedFolder, tempFolder, uploadWav } from './engine-cluster';

describe('cluster: retention over shared media', function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let cluster: EngineCluster;
  let data: ReturnType<typeof tempFolder>;

  before(async () => {
    redis = await startTestRedis();
    data = tempFolder('cluster-retention-');
    cluster = new EngineCluster({
      redisUrl: redis.url,
      storage: sharedFolder(join(data.path, 'data')),
      // Finished media go 2 s after their last use; every instance checks every 0.3 s.
      args: ['--workers', '1', '--keep-hours', String(2 / 3600), '--keep-grace-min', '0', '--sweep-every-min', '0.005'],
    });
    await cluster.add();
    // The first instance's start sweep takes the retention's turn; it keeps it while it lives.
    await new Promise((r) => setTimeout(r, 1000));
    await cluster.add();
  });

  after(async () => {
    await cluster?.stop();
    await redis?.stop();
    data?.remove();
  });

  it('removes each finished media once, from Redis and from the data folder', async () => {
    const urls = cluster.instances.map((i) => i.url);
    const uploads = await Promise.all([0, 1, 2].map((i) => uploadWav(urls[i % 2], makeWav(0.5, 16_000))));
    const uids = uploads.map((u) => u.body.uid as string);
    for (const uid of uids) assert.equal((await followToEnd(urls, uid)).enhancement_status, 'COMPLETED');
    // Watched in Redis, not asked for over HTTP: a status request is a use, which keeps a media longer.
    const client = new Redis(redis.url);
    try {
      const deadline = Date.now() + 20_000;
      while ((await client.exists(...uids.map((uid) => `media-enhance:engine:media:${uid}`))) > 0) {
        assert.ok(Date.now() < deadline, 'the media were not removed');
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.deepEqual(await client.keys(`*${uids[0]}*`), [], 'nothing of it is left in Redis');
    } finally {
      client.disconnect();
    }
    for (const uid of uids) {
      for (const url of urls) assert.equal((await getJson(`${url}/v2/medias/${uid}/metadata`)).status, 404);
      assert.equal(existsSync(join(data.path, 'data', 'media', uid)), false, 'its folder is gone');
    }
    await new Promise((r) => setTimeout(r, 1000)); // further sweeps find nothing more to remove
    const told = cluster.instances.map((i) => i.output()).join('');
    for (const uid of uids)
      assert.equal(told.split(`removed media ${uid}`).length - 1, 1, `media ${uid} was removed once, by one instance`);
  });

  it('keeps a media followed on an instance other than the sweeping one, and removes it once left alone', async () => {
    const [sweeping, other] = cluster.instances;
    const upload = await uploadWav(other.url, makeWav(0.5, 16_000));
    const uid = upload.body.uid as string;
    assert.equal((await followToEnd([other.url], uid)).enhancement_status, 'COMPLETED');
    // Asked for on the other instance for twice the age limit: its uses reach the sweeping instance.
    const until = Date.now() + 4_000;
    while (Date.now() < until) {
      assert.equal((await getJson(`${other.url}/v2/medias/${uid}/metadata`)).status, 200, 'still kept');
      await new Promise((r) => setTimeout(r, 250));
    }
    const deadline = Date.now() + 20_000;
    while (!sweeping.output().includes(`removed media ${uid}`)) {
      assert.ok(Date.now() < deadline, 'the media was not removed once left alone');
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal((await getJson(`${other.url}/v2/medias/${uid}/metadata`)).status, 404);
  });
});
