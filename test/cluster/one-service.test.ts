// Three engine processes on one Redis and one data folder answer as one service: a media uploaded on
// one is followed on another and downloaded from a third, and an instance started later serves it all.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { EngineCluster, followToEnd, getJson, sharedFolder, tempFolder, uploadWav } from './engine-cluster';
import { servesEvery, uploadsSpreadOverThree, type KeptMedia } from './one-service-checks';

describe('cluster: three instances answer as one service', function () {
  this.timeout(120_000);
  let redis: TestRedis;
  let cluster: EngineCluster;
  let data: ReturnType<typeof tempFolder>;
  const media: KeptMedia[] = [];

  before(async () => {
    redis = await startTestRedis();
    data = tempFolder('cluster-one-service-');
    cluster = new EngineCluster({
      redisUrl: redis.url,
      storage: sharedFolder(join(data.path, 'data')),
      args: ['--workers', '1', '--metadata-wait', '20'],
    });
    for (let i = 0; i < 3; i++) await cluster.add();
  });

  after(async () => {
    await cluster?.stop();
    await redis?.stop();
    data?.remove();
  });

  it('takes uploads on every instance; each is followed on another and downloaded whole from a third', async () => {
    media.push(
      ...(await uploadsSpreadOverThree(
        cluster.instances.map((i) => i.url),
        data.path,
      )),
    );
  });

  it('an instance started afterwards (a new process) serves every media', async () => {
    assert.equal(media.length, 6);
    await servesEvery((await cluster.add()).url, media);
  });

  it('a status request held on one instance answers as soon as another moves the media on', async () => {
    const [a, b] = cluster.instances;
    const upload = await uploadWav(a.url, makeWav(1, 48_000));
    const uid = upload.body.uid as string;
    const asked = Date.now();
    const held = await getJson(`${b.url}/v2/medias/${uid}/metadata?wait=20`);
    // Told through Redis's channel: the answer comes on the change, not when the 20 s wait runs out.
    assert.ok(Date.now() - asked < 10_000, `answered after ${Date.now() - asked} ms`);
    assert.notEqual(held.body.enhancement_status, 'PENDING');
    assert.equal((await followToEnd([b.url], uid)).enhancement_status, 'COMPLETED');
  });

  it('GET /healthz answers 200 on every instance, without a key, with its status only', async () => {
    for (const { url } of cluster.instances) {
      const res = await fetch(`${url}/healthz`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: 'ok', ffmpeg: true });
    }
  });
});
