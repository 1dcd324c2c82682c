// Three engine processes on one Redis and one data folder answer as one service: a media uploaded on
// one is followed on another and downloaded from a third, and an instance started later serves it all.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import {
  EngineCluster,
  followToEnd,
  getBytes,
  getJson,
  secondsOf,
  sha256,
  sharedFolder,
  tempFolder,
  uploadWav,
} from './engine-cluster';

describe('cluster: three instances answer as one service', function () {
  this.timeout(120_000);
  let redis: TestRedis;
  let cluster: EngineCluster;
  let data: ReturnType<typeof tempFolder>;
  const media: Array<{ uid: string; original: Buffer; enhancedSha: string }> = [];

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
    const urls = cluster.instances.map((i) => i.url);
    const originals = [1, 1.25, 1.5, 1.75, 2, 2.25].map((seconds) => makeWav(seconds, 48_000));
    const uploads = await Promise.all(originals.map((wav, i) => uploadWav(urls[i % 3], wav, `take-${i}.wav`)));
    for (const [i, upload] of uploads.entries()) {
      assert.equal(upload.status, 201, JSON.stringify(upload.body));
      const uid = upload.body.uid as string;
      const ended = await followToEnd([urls[(i + 1) % 3]], uid);
      assert.equal(ended.enhancement_status, 'COMPLETED', JSON.stringify(ended));
      const third = urls[(i + 2) % 3];
      const pre = await getBytes(`${third}/v2/medias/${uid}/file?step=PRE`);
      assert.equal(pre.status, 200);
      assert.equal(sha256(pre.body), sha256(originals[i]), `the original of media ${i} is intact`);
      const enhanced = await getBytes(`${third}/v2/medias/${uid}/file`);
      assert.equal(enhanced.status, 200);
      const seconds = (originals[i].length - 44) / 2 / 48_000;
      // Whole: ffprobe finds every second the original had.
      const duration = await secondsOf(enhanced.body, data.path);
      assert.ok(Math.abs(duration - seconds) < 0.01, `media ${i}: ${duration} s enhanced, ${seconds} s uploaded`);
      const report = await getJson(`${urls[i % 3]}/v2/medias/${uid}/loudness`);
      assert.equal(report.status, 200);
      assert.equal(report.body.uid, uid);
      media.push({ uid, original: originals[i], enhancedSha: sha256(enhanced.body) });
    }
  });

  it('an instance started afterwards (a new process) serves every media', async () => {
    assert.equal(media.length, 6);
    const late = await cluster.add();
    for (const { uid, original, enhancedSha } of media) {
      const metadata = await getJson(`${late.url}/v2/medias/${uid}/metadata`);
      assert.equal(metadata.body.enhancement_status, 'COMPLETED');
      assert.equal(sha256((await getBytes(`${late.url}/v2/medias/${uid}/file?step=PRE`)).body), sha256(original));
      assert.equal(sha256((await getBytes(`${late.url}/v2/medias/${uid}/file`)).body), enhancedSha);
    }
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
      assert.deepEqual(await res.json(), { status: 'ok' });
    }
  });
});
