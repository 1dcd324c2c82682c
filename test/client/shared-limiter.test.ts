import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import { MediaEnhanceClient } from '../../src';
import { systemClock } from '../../src/client/clock';
import { RollingWindowLimiter } from '../../src/client/rate-limiter';
import { RedisWindowStore, LEASE_MS, type SharingState } from '../../src/client/shared-limiter/redis-store';
import { SharedWindowLimiter } from '../../src/client/shared-limiter/shared-window-limiter';
import { Sharing } from '../../src/client/shared-limiter/sharing';
import type { AccessLogEntry } from '../../src/engine';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

/** Most requests the service accepted for `pathPart` in any rolling window of `windowMs`. */
function maxAcceptedInWindow(log: AccessLogEntry[], pathPart: string, windowMs: number): number {
  const times = log.filter((r) => r.path.includes(pathPart) && r.status !== 429).map((r) => r.at);
  let max = 0;
  for (const t of times) max = Math.max(max, times.filter((u) => u >= t && u < t + windowMs).length);
  return max;
}

const count429 = (log: AccessLogEntry[]) => log.filter((r) => r.status === 429).length;

async function until(what: string, test: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('shared limiter: the Redis window', function () {
  this.timeout(30_000);
  let redis: TestRedis;
  let store: RedisWindowStore;
  let peek: Redis;

  beforeEach(async () => {
    redis = await startTestRedis();
    store = new RedisWindowStore({ redisUrl: redis.url, keyPrefix: 'test' }, 'the-api-key');
    assert.equal(await store.ready(5_000), true);
    peek = new Redis(redis.url);
  });

  afterEach(async () => {
    await store.close();
    peek.disconnect();
    await redis.stop();
  });

  it('takes a place only while the window has room, and says when the next frees', async () => {
    const members = [store.newMember(), store.newMember(), store.newMember()];
    assert.deepEqual(await store.acquire('uploadMedia', 2, 1_000, members[0]), { taken: true, used: 1, waitMs: 0 });
    assert.equal((await store.acquire('uploadMedia', 2, 1_000, members[1])).taken, true);
    // Both places are held by requests under way: only an answer can free one, at no time known.
    assert.deepEqual(await store.acquire('uploadMedia', 2, 1_000, members[2]), {
      taken: false,
      used: 2,
      waitMs: undefined,
    });
    await store.settle('uploadMedia', members[0]);
    const answer = await store.acquire('uploadMedia', 2, 1_000, members[2]);
    assert.equal(answer.taken, false);
    assert.ok(answer.waitMs! > 900 && answer.waitMs! <= 1_000, `waitMs ${answer.waitMs}`);
    // A 429 or a request never sent gives its place back.
    await store.release('uploadMedia', [members[1]]);
    assert.equal((await store.acquire('uploadMedia', 2, 1_000, members[2])).taken, true);
  });

  it('lets a place go once its window has passed', async () => {
    const first = store.newMember();
    await store.acquire('getMetadata', 1, 300, first);
    await store.settle('getMetadata', first);
    assert.equal((await store.acquire('getMetadata', 1, 300, store.newMember())).taken, false);
    await new Promise((r) => setTimeout(r, 350));
    assert.equal((await store.acquire('getMetadata', 1, 300, store.newMember())).taken, true);
  });

  it('holds the place of a request under way while it is renewed, and lets it go after its hold', async () => {
    const member = store.newMember();
    await store.acquire('uploadMedia', 1, 1_000, member);
    const [key] = await peek.keys('*');
    // Scored above every time, with the end of its lease: an instance that died mid-request frees it by itself.
    const leaseEnd = () => peek.zscore(key, member).then((score) => Number(score) - 1e15);
    const first = await leaseEnd();
    assert.ok(Math.abs(first - (Date.now() + LEASE_MS)) < 1_000, `lease ends at ${first}`);
    await new Promise((r) => setTimeout(r, 20));
    await store.renew('uploadMedia', [member]);
    assert.ok((await leaseEnd()) > first);
    // Once answered, a late renewal leaves the place counting from the answer.
    await store.settle('uploadMedia', member);
    await store.renew('uploadMedia', [member]);
    assert.ok(Math.abs(Number(await peek.zscore(key, member)) - Date.now()) < 1_000);
  });

  it('learns of places the service counts and Redis does not (a client that does not share)', async () => {
    await store.acquire('uploadMedia', 5, 1_000, store.newMember());
    assert.equal(await store.observe('uploadMedia', 4, 5, 1_000), 3);
    assert.equal(await store.observe('uploadMedia', 2, 5, 1_000), 0);
    assert.equal((await store.acquire('uploadMedia', 5, 1_000, store.newMember())).taken, true);
    assert.equal((await store.acquire('uploadMedia', 5, 1_000, store.newMember())).taken, false);
  });

  it('adds no more places than the window holds, and nothing for a count that is not sane', async () => {
    await store.acquire('uploadMedia', 10, 60_000, store.newMember());
    const [window] = await peek.keys('test:limits:*:uploadMedia');
    // A service (or anyone in its path) answering X-RateLimit-Used: 3000000 once.
    assert.equal(await store.observe('uploadMedia', 3_000_000, 10, 60_000), 0);
    assert.equal(await peek.zcard(window), 1);
    // A large but sane count fills the window up to its limit, never beyond.
    assert.equal(await store.observe('uploadMedia', 50_000, 10, 60_000), 9);
    assert.equal(await peek.zcard(window), 10);
    for (const bad of [-5, 2.5, Number.NaN, Infinity])
      assert.equal(await store.observe('uploadMedia', bad, 20, 60_000), 0);
    assert.equal(await peek.zcard(window), 10);
    assert.equal(await peek.ping(), 'PONG');
  });

  it('a service answering X-RateLimit-Used: 3000000 leaves Redis answering and the window at its limit', async () => {
    const service = createServer((req, res) => {
      req.resume();
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-ratelimit-limit': '10',
        'x-ratelimit-used': '3000000',
        'x-ratelimit-window': '60',
      });
      res.end(JSON.stringify({ uid: 'm1', enhancement_status: 'PENDING' }));
    });
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    const client = new MediaEnhanceClient({
      baseUrl: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
      apiKey: 'the-api-key',
      sharedLimiter: { redisUrl: redis.url, keyPrefix: 'test' },
    });
    try {
      for (let i = 0; i < 3; i++) await client.getMetadata('m1');
      await until('the answers were observed', async () => (await peek.keys('test:limits:*')).length === 1);
      const [window] = await peek.keys('test:limits:*');
      await new Promise((r) => setTimeout(r, 200));
      assert.ok((await peek.zcard(window)) <= 10, `${await peek.zcard(window)} members`);
      assert.equal(await peek.ping(), 'PONG');
      assert.equal(client.sharingState(), 'shared');
    } finally {
      await client.close();
      service.close();
    }
  });

  it('names the window by a hash of the API key, never the key itself', async () => {
    await store.acquire('uploadMedia', 5, 1_000, store.newMember());
    const keys = await peek.keys('*');
    assert.equal(keys.length, 1);
    assert.match(keys[0], /^test:limits:[0-9a-f]{32}:uploadMedia$/);
    assert.ok(!keys[0].includes('the-api-key'));
  });

  it('fails a call within its time bound when Redis does not answer', async () => {
    redis.pause();
    try {
      const started = Date.now();
      await assert.rejects(store.acquire('uploadMedia', 5, 1_000, store.newMember()), /did not answer within 500 ms/);
      assert.ok(Date.now() - started < 1_000);
    } finally {
      redis.resume();
    }
  });
});

describe('shared limiter: one instance in line', function () {
  this.timeout(30_000);
  let redis: TestRedis;
  let sharing: Sharing;
  let peek: Redis;

  beforeEach(async () => {
    redis = await startTestRedis();
    sharing = new Sharing(new RedisWindowStore({ redisUrl: redis.url, keyPrefix: 'line' }, 'key'));
    assert.equal(await sharing.inUse(), true);
    peek = new Redis(redis.url);
    // One test kills Redis: this connection's reconnect errors are expected.
    peek.on('error', () => undefined);
  });

  afterEach(async () => {
    await sharing.close();
    peek.disconnect();
    await redis.stop();
  });

  const limiter = (limit: number, windowMs: number) =>
    new SharedWindowLimiter(
      'uploadMedia',
      new RollingWindowLimiter(limit, windowMs, systemClock),
      sharing,
      systemClock,
    );
  const placesInRedis = async () => {
    const [key] = await peek.keys('line:limits:*');
    return key ? peek.zcard(key) : 0;
  };

  it('lets callers through in the order they came, when another instance fills the window', async () => {
    const other = limiter(2, 400);
    const mine = limiter(2, 400);
    (await Promise.all([other.acquire(), other.acquire()])).forEach((slot) => slot.settle());
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        mine.acquire().then((slot) => {
          order.push(i);
          slot.settle();
        }),
      ),
    );
    assert.deepEqual(order, [0, 1, 2, 3, 4]);
  });

  it('gives the place back for a 429 or a request never sent, and counts an answered one', async () => {
    const shared = limiter(5, 10_000);
    const [a, b, c] = await Promise.all([shared.acquire(), shared.acquire(), shared.acquire()]);
    assert.equal(await placesInRedis(), 3);
    a.answered({}, true);
    b.refund();
    c.answered({}, false);
    await until('two places given back', async () => (await placesInRedis()) === 1);
    assert.equal(shared.used(), 1);
  });

  it('a caller that gives up while in line takes no place', async () => {
    const shared = limiter(1, 10_000);
    const first = await shared.acquire();
    const leaving = new AbortController();
    const waiting = shared.acquire({ signal: leaving.signal });
    await new Promise((r) => setTimeout(r, 100));
    leaving.abort(new Error('gave up'));
    await assert.rejects(waiting, /gave up/);
    first.refund();
    await until('the window is empty', async () => (await placesInRedis()) === 0);
    assert.equal(shared.queued(), 0);
  });

  it('learns from the headers of places another client took without Redis', async () => {
    const shared = limiter(5, 10_000);
    const slot = await shared.acquire();
    slot.answered({ 'x-ratelimit-limit': '5', 'x-ratelimit-used': '4', 'x-ratelimit-window': '10' }, false);
    await until('Redis counts four', async () => (await placesInRedis()) === 4);
  });

  it('hands out places at once only while sharing is off', async () => {
    const shared = limiter(5, 10_000);
    assert.equal(shared.tryAcquire(), undefined);
    await redis.kill();
    await assert.doesNotReject(shared.acquire());
    assert.equal(sharing.current(), 'unreachable');
    assert.notEqual(shared.tryAcquire(), undefined);
  });
});

describe('shared limiter: clients on one key', function () {
  this.timeout(60_000);
  const wav = makeWav(0.1, 8_000);
  let redis: TestRedis;
  let engine: TestEngine;
  const clients: MediaEnhanceClient[] = [];

  beforeEach(async () => {
    redis = await startTestRedis();
    engine = await startTestEngine({ windowMs: 1_000, limits: { uploadMedia: 4 } });
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await engine.dispose();
    await redis.stop();
  });

  function client(states?: SharingState[], timeoutMs?: number): MediaEnhanceClient {
    const c = new MediaEnhanceClient({
      baseUrl: engine.url,
      apiKey: engine.apiKey,
      windowMs: 1_000,
      limits: { uploadMedia: 4 },
      sharedLimiter: { redisUrl: redis.url, keyPrefix: 'test', timeoutMs, onStateChange: (s) => states?.push(s) },
    });
    clients.push(c);
    return c;
  }

  it('keeps two clients inside the limit together, without a 429', async () => {
    const [a, b] = [client(), client()];
    await Promise.all([a, b].flatMap((c) => Array.from({ length: 6 }, () => c.uploadMedia({ file: wav }))));
    const log = engine.requests();
    assert.equal(count429(log), 0);
    assert.equal(maxAcceptedInWindow(log, '/v2/medias', 1_000), 4);
    assert.equal(a.sharingState(), 'shared');
  });

  it('goes on with the local limiter while Redis is down, says so, and shares again once it is back', async () => {
    const states: SharingState[] = [];
    const c = client(states);
    await c.uploadMedia({ file: wav });
    assert.deepEqual(states, ['shared']);
    await redis.kill();
    const started = Date.now();
    await Promise.all(Array.from({ length: 3 }, () => c.uploadMedia({ file: wav })));
    assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
    assert.equal(c.sharingState(), 'unreachable');
    assert.deepEqual(states, ['shared', 'unreachable']);
    await redis.start();
    await until('sharing resumes', () => c.sharingState() === 'shared');
    assert.deepEqual(states, ['shared', 'unreachable', 'shared']);
    await c.uploadMedia({ file: wav });
    const peek = new Redis(redis.url);
    try {
      assert.equal((await peek.keys('test:limits:*')).length, 1);
    } finally {
      peek.disconnect();
    }
    // Nothing sent twice in the change-over: five uploads asked, five answered.
    assert.equal(engine.requests().filter((r) => r.path === '/v2/medias').length, 5);
  });

  it('falls back within its time bound when Redis is slow, and resumes when it answers again', async () => {
    const c = client(undefined, 200);
    await c.uploadMedia({ file: wav });
    redis.pause();
    try {
      const started = Date.now();
      await c.uploadMedia({ file: wav });
      assert.ok(Date.now() - started < 1_500, `took ${Date.now() - started} ms`);
      assert.equal(c.sharingState(), 'unreachable');
    } finally {
      redis.resume();
    }
    await until('sharing resumes', () => c.sharingState() === 'shared');
  });

  it('works without Redis from the start: every call goes through the local limiter', async () => {
    await redis.kill();
    const c = client();
    const started = Date.now();
    await c.uploadMedia({ file: wav });
    assert.ok(Date.now() - started < 5_000);
    assert.equal(c.sharingState(), 'unreachable');
  });
});
