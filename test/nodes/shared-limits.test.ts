// The config node's "share limits with other instances": its client shares its windows through Redis,
// says so when Redis is unreachable, and refuses a URL that is not Redis's.
import assert from 'node:assert/strict';
import Redis from 'ioredis';
import { freePort } from '../fixtures/free-port';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  remoteConfig,
  sleep,
  statusTexts,
  stopHelper,
  TAB,
} from './flow-helper';

const NOT_SHARED = 'limits not shared: Redis unreachable';

describe('nodes: limits shared with other instances through Redis', function () {
  this.timeout(60_000);
  let engine: TestEngine;
  let redis: TestRedis;

  before(async () => {
    await initHelper();
    engine = await startTestEngine({ limits: { uploadMedia: 3 }, windowMs: 1_000 });
    redis = await startTestRedis();
  });
  after(async () => {
    await stopHelper();
    await engine.dispose();
    await redis.stop();
  });
  afterEach(() => helper.unload());

  function flow(redisUrl: string): object[] {
    return [
      TAB,
      remoteConfig(engine.url, { limitUpload: '3', redisUrl, redisKeyPrefix: 'nodes-test' }),
      { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['accepted']] },
      { id: 'accepted', type: 'helper', z: 'tab' },
      ...catchAll(),
    ];
  }

  async function uploadSix(): Promise<void> {
    const accepted = collect(helper.getNode('accepted'));
    const caught = collect(helper.getNode('caught'));
    for (let i = 0; i < 6; i++) helper.getNode('upload').receive({ payload: makeWav(0.1, 8000) });
    const deadline = Date.now() + 20_000;
    while (accepted.length + caught.length < 6 && Date.now() < deadline) await sleep(50);
    assert.equal(caught.length, 0, JSON.stringify(caught.map((m) => m.error)));
    assert.equal(accepted.length, 6);
  }

  it('takes its places in the Redis window of the key', async () => {
    await loadFlow(flow(redis.url), { svc: { apiKey: engine.apiKey } });
    await uploadSix();
    const peek = new Redis(redis.url);
    try {
      const keys = await peek.keys('nodes-test:limits:*');
      assert.equal(keys.length, 1);
      assert.ok(!keys[0].includes(engine.apiKey));
    } finally {
      peek.disconnect();
    }
    const config = helper.getNode('svc');
    assert.equal(config.warn.callCount, 0);
  });

  it('goes on with its own limits when Redis is unreachable, and its status and a warning say so', async () => {
    await loadFlow(flow(`redis://127.0.0.1:${await freePort()}`), { svc: { apiKey: engine.apiKey } });
    await uploadSix();
    const config = helper.getNode('svc');
    assert.ok(config.warn.getCalls().some((call) => String(call.args[0]).startsWith(NOT_SHARED)));
    assert.ok(statusTexts(config).includes(NOT_SHARED));
    const uploads = engine.requests().filter((r) => r.path === '/v2/medias');
    assert.equal(uploads.filter((r) => r.status === 429).length, 0);
  });

  it('refuses a URL that is not redis:// or rediss://, without showing it', async () => {
    await loadFlow(flow('http://user:secret@127.0.0.1:6379'), { svc: { apiKey: engine.apiKey } });
    const config = helper.getNode('svc');
    const deadline = Date.now() + 5_000;
    while (config.error.callCount === 0 && Date.now() < deadline) await sleep(20);
    const message = String(config.error.firstCall?.args[0]);
    assert.match(message, /Redis URL.*must be a redis:\/\/ or rediss:\/\/ URL/);
    assert.ok(!message.includes('secret'));
  });

  it('refuses a URL that holds a password, which would be saved in the flows, without showing it', async () => {
    await loadFlow(flow('redis://:secret@127.0.0.1:6379'), { svc: { apiKey: engine.apiKey } });
    const config = helper.getNode('svc');
    const deadline = Date.now() + 5_000;
    while (config.error.callCount === 0 && Date.now() < deadline) await sleep(20);
    const message = String(config.error.firstCall?.args[0]);
    assert.match(message, /Redis URL.*must not hold a password.*password field/);
    assert.ok(!message.includes('secret'));
  });
});
