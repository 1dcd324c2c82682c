// Redis goes away mid-run and comes back: uploads are refused with 503 and Retry-After while it is away
// (never accepted and then lost), /healthz says so, and the instances resume by themselves.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { EngineCluster, followToEnd, getBytes, sha256, sharedFolder, tempFolder, uploadWav } from './engine-cluster';

describe('cluster: Redis stopped and started mid-run', function () {
  this.timeout(120_000);
  let redis: TestRedis;
  let cluster: EngineCluster;
  let data: ReturnType<typeof tempFolder>;

  before(async () => {
    data = tempFolder('cluster-outage-');
    // Persistence on, as the README asks of the queue's Redis: a restart keeps every write.
    redis = await startTestRedis({ persistDir: data.path });
    cluster = new EngineCluster({
      redisUrl: redis.url,
      storage: sharedFolder(join(data.path, 'data')),
      args: ['--workers', '1', '--processing-delay-ms', '1500', '--job-lock-ms', '2000'],
    });
    await cluster.add();
    await cluster.add();
  });

  after(async () => {
    await cluster?.stop();
    await redis?.stop();
    data?.remove();
  });

  it('answers 503 with Retry-After while Redis is away, loses nothing, and resumes by itself', async () => {
    const urls = cluster.instances.map((i) => i.url);
    const accepted = new Map<string, Buffer>();
    const send = async (url: string, seconds: number) => {
      const wav = makeWav(seconds, 48_000);
      const answer = await uploadWav(url, wav);
      if (answer.status === 201) accepted.set(answer.body.uid as string, wav);
      return answer;
    };
    for (const [i, url] of urls.entries()) assert.equal((await send(url, 1 + i / 10)).status, 201);

    await redis.kill(); // mid-job: both media are PENDING or PROCESSING
    for (const [i, url] of urls.entries()) {
      const refused = await send(url, 0.5 + i / 10);
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.headers.get('retry-after'), '5');
      assert.match(String(refused.body.detail), /shared state \(Redis\)/);
      const health = await fetch(`${url}/healthz`);
      assert.equal(health.status, 503);
      assert.equal(health.headers.get('retry-after'), '5');
      assert.deepEqual(await health.json(), { status: 'unavailable', ffmpeg: true });
    }

    await redis.start();
    const deadline = Date.now() + 20_000;
    for (const url of urls) {
      while ((await fetch(`${url}/healthz`)).status !== 200) {
        assert.ok(Date.now() < deadline, `${url} did not recover`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    for (const [i, url] of urls.entries()) assert.equal((await send(url, 0.7 + i / 10)).status, 201);

    assert.equal(accepted.size, 4);
    for (const [uid, original] of accepted) {
      const ended = await followToEnd(urls, uid);
      assert.equal(ended.enhancement_status, 'COMPLETED', JSON.stringify(ended));
      assert.equal(sha256((await getBytes(`${urls[0]}/v2/medias/${uid}/file?step=PRE`)).body), sha256(original));
      assert.equal((await getBytes(`${urls[1]}/v2/medias/${uid}/file`)).status, 200);
    }
  });
});
