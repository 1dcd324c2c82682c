// Redis at its memory limit (maxmemory, noeviction) while a job ends: the instance waits and tries
// again without flooding its log or spinning, answers new media 503 with Retry-After (which the client
// retries), and the media completes once Redis takes writes again.
import assert from 'node:assert/strict';
import Redis from 'ioredis';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { followToEnd, uploadWav } from './engine-cluster';

describe('cluster: Redis at its memory limit', function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let client: Redis;
  let engine: TestEngine;

  before(async () => {
    redis = await startTestRedis();
    client = new Redis(redis.url);
    engine = await startTestEngine({
      redis: redis.url,
      apiKeys: ['cluster-test-key'],
      workers: 1,
      processingDelayMs: 1500,
      retention: { sweepIntervalMs: 200 },
    });
  });

  after(async () => {
    await client?.config('SET', 'maxmemory', '0').catch(() => undefined);
    await engine?.dispose();
    client?.disconnect();
    await redis?.stop();
  });

  it('backs off, logs once, answers 503, and completes the media afterwards', async () => {
    const upload = await uploadWav(engine.url, makeWav(0.5, 16_000));
    assert.equal(upload.status, 201);
    const uid = upload.body.uid as string;
    const deadline = Date.now() + 10_000;
    while ((await client.get(`media-enhance:engine:media:${uid}`))?.includes('"PROCESSING"') !== true) {
      assert.ok(Date.now() < deadline, 'the media did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    // Full while the job ends: its last writes are refused with OOM.
    await client.config('SET', 'maxmemory', '1');
    const before = engine.errorLines.length;
    const commandsBefore = await commandsProcessed(client);
    await new Promise((r) => setTimeout(r, 4_000));
    const refused = await uploadWav(engine.url, makeWav(0.2, 16_000));
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
    const logged = engine.errorLines.slice(before);
    assert.ok(logged.length <= 4, `a few lines, not a flood (${logged.length}):\n${logged.slice(0, 10).join('\n')}`);
    // Waiting is not spinning: a few hundred calls in 4 s at most (sweeps, the queue's own polling).
    const commands = (await commandsProcessed(client)) - commandsBefore;
    assert.ok(commands < 1000, `calls to Redis while it was full: ${commands}`);
    await client.config('SET', 'maxmemory', '0');
    assert.equal((await followToEnd([engine.url], uid, 30_000)).enhancement_status, 'COMPLETED');
  });
});

async function commandsProcessed(client: Redis): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await client.info('stats'))![1]);
}
