// The interface's rate limits are counted across instances: one window per key and operation in Redis.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { randomUUID } from 'node:crypto';
import { startTestEngine, KEY } from '../fixtures/test-engine';
import { EngineCluster, sharedFolder, tempFolder, uploadWav } from './engine-cluster';

describe('cluster: rate limits shared by the instances', function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let cluster: EngineCluster;
  let data: ReturnType<typeof tempFolder>;

  before(async () => {
    redis = await startTestRedis();
    data = tempFolder('cluster-limits-');
    cluster = new EngineCluster({
      redisUrl: redis.url,
      storage: sharedFolder(join(data.path, 'data')),
      args: ['--workers', '1', '--limit-upload', '3', '--window-ms', '60000'],
    });
    await cluster.add();
    await cluster.add();
  });

  after(async () => {
    await cluster?.stop();
    await redis?.stop();
    data?.remove();
  });

  it('8 uploads at once over two instances with a limit of 3: 3 accepted, 5 answered 429 with the headers', async () => {
    const wav = makeWav(0.5, 16_000);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => uploadWav(cluster.instances[i % 2].url, wav, `burst-${i}.wav`)),
    );
    const accepted = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 429);
    assert.equal(accepted.length, 3, answers.map((a) => a.status).join(' '));
    assert.equal(refused.length, 5);
    for (const answer of refused) {
      assert.equal(answer.headers.get('x-ratelimit-limit'), '3');
      assert.equal(answer.headers.get('x-ratelimit-remaining'), '0');
      assert.equal(answer.headers.get('x-ratelimit-used'), '3');
      assert.equal(answer.headers.get('x-ratelimit-window'), '60');
      const retryAfter = Number(answer.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    }
    // The accepted ones counted 1, 2, 3 in one window, whichever instance took them.
    const used = accepted.map((a) => Number(a.headers.get('x-ratelimit-used'))).sort();
    assert.deepEqual(used, [1, 2, 3]);
    // Both instances now answer from the same window.
    for (const { url } of cluster.instances) {
      const res = await fetch(`${url}/v2/medias`, { method: 'POST', headers: { 'x-api-key': 'wrong' } });
      assert.equal(res.status, 401);
      await res.arrayBuffer();
      const again = await uploadWav(url, wav);
      assert.equal(again.status, 429);
    }
  });

  it('gives back the place of a loudness request for an unknown media, in the shared window', async () => {
    const engines = [
      await startTestEngine({ redis: redis.url, limits: { getMetadata: 5 } }),
      await startTestEngine({ redis: redis.url, limits: { getMetadata: 5 } }),
    ];
    try {
      const ask = async (url: string, path: string) => {
        const res = await fetch(`${url}${path}`, { headers: { 'x-api-key': KEY } });
        await res.arrayBuffer();
        return { status: res.status, used: res.headers.get('x-ratelimit-used') };
      };
      const unknown = `/v2/medias/${randomUUID()}`;
      assert.deepEqual(await ask(engines[0].url, `${unknown}/metadata`), { status: 404, used: '1' });
      assert.deepEqual(await ask(engines[1].url, `${unknown}/loudness`), { status: 404, used: '1' });
      assert.deepEqual(await ask(engines[1].url, `${unknown}/metadata`), { status: 404, used: '2' });
    } finally {
      for (const engine of engines) await engine.dispose();
    }
  });
});
