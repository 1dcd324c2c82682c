// The retention's turn over instances sharing their media: an instance that stops normally gives it
// back at once, so that after a rolling restart another sweeps and requeues without waiting for it to lapse.
import assert from 'node:assert/strict';
import Redis from 'ioredis';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { startTestEngine } from '../fixtures/test-engine';

const TURN = 'media-enhance:engine:retention-turn';

describe('cluster: the retention turn', function () {
  this.timeout(30_000);
  let redis: TestRedis;
  let client: Redis;

  before(async () => {
    redis = await startTestRedis();
    client = new Redis(redis.url);
  });

  after(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('is given back when its instance stops normally, and taken at once by the next', async () => {
    const first = await startTestEngine({ redis: redis.url, retention: { sweepIntervalMs: 60_000 } });
    try {
      const deadline = Date.now() + 10_000;
      while ((await client.get(TURN)) === null) {
        assert.ok(Date.now() < deadline, 'the first instance never took the turn');
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok((await client.pttl(TURN)) > 60_000, 'held for two sweep intervals');
    } finally {
      await first.dispose();
    }
    assert.equal(await client.get(TURN), null, 'the turn is free once its holder has stopped');
    // The next instance's start sweep finds it free.
    const next = await startTestEngine({ redis: redis.url, retention: { sweepIntervalMs: 60_000 } });
    try {
      const deadline = Date.now() + 10_000;
      while ((await client.get(TURN)) === null) {
        assert.ok(Date.now() < deadline, 'the next instance did not take the turn');
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await next.dispose();
    }
  });

  it('is not taken from another instance by a stop', async () => {
    await client.set(TURN, 'another-instance', 'PX', 60_000);
    const engine = await startTestEngine({ redis: redis.url, retention: { sweepIntervalMs: 60_000 } });
    await new Promise((r) => setTimeout(r, 300)); // its start sweep found the turn taken
    await engine.dispose();
    assert.equal(await client.get(TURN), 'another-instance');
    await client.del(TURN);
  });
});
