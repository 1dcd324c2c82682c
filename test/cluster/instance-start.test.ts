// What one instance's start may and may not do to a data folder other instances share, /healthz of one
// process on local disk, and how a wrong Redis URL is refused.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { startEngine } from '../../src/engine';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { tempFolder } from './engine-cluster';

describe('cluster: an instance starting on a shared data folder', function () {
  this.timeout(30_000);
  let redis: TestRedis;
  let engine: TestEngine | undefined;

  before(async () => {
    redis = await startTestRedis();
  });

  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
  });

  after(async () => {
    await redis?.stop();
  });

  it("leaves another instance's upload in progress and its new media folder alone; only stale uploads go", async () => {
    const data = tempFolder('cluster-start-');
    const media = join(data.path, 'media');
    const arriving = join(media, '.incoming', randomUUID());
    const stale = join(media, '.incoming', randomUUID());
    const placed = join(media, randomUUID()); // another instance moved the input in; its record comes next
    await fsp.mkdir(join(media, '.incoming'), { recursive: true });
    await fsp.writeFile(arriving, 'still arriving');
    await fsp.writeFile(stale, 'left by a dead instance');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await fsp.utimes(stale, twoHoursAgo, twoHoursAgo);
    await fsp.mkdir(placed);
    await fsp.writeFile(join(placed, 'input'), 'RIFF');
    engine = await startTestEngine({ redis: redis.url }, data.path);
    assert.ok(existsSync(arriving), 'the upload in progress stays');
    assert.ok(existsSync(join(placed, 'input')), 'the media folder without meta.json stays');
    assert.equal(existsSync(stale), false, 'an upload untouched for an hour goes');
  });

  it('answers GET and HEAD /healthz 200 without a key on one process with local disk', async () => {
    engine = await startTestEngine();
    const get = await fetch(`${engine.url}/healthz`);
    assert.equal(get.status, 200);
    assert.deepEqual(await get.json(), { status: 'ok', ffmpeg: true });
    assert.equal((await fetch(`${engine.url}/healthz`, { method: 'HEAD' })).status, 200);
  });

  it('refuses a Redis URL that is not redis:// or rediss://, naming the option, never the password', async () => {
    const data = tempFolder('cluster-url-');
    try {
      await assert.rejects(
        startEngine({ apiKeys: ['k'], dataDir: data.path, redis: 'http://user:hunter2@127.0.0.1:6379' }),
        (err: Error) => {
          assert.match(err.message, /^redis: must be a URL redis:\/\//);
          assert.match(err.message, /user:\*\*\*@127\.0\.0\.1/);
          assert.doesNotMatch(err.message, /hunter2/);
          return true;
        },
      );
      // A password may hold an @ of its own: none of it shows.
      await assert.rejects(
        startEngine({ apiKeys: ['k'], dataDir: data.path, redis: 'http://:hun@ter2@127.0.0.1:6379/0' }),
        (err: Error) => {
          assert.match(err.message, /"http:\/\/:\*\*\*@127\.0\.0\.1:6379\/0"/);
          assert.doesNotMatch(err.message, /hun|ter2/);
          return true;
        },
      );
    } finally {
      data.remove();
    }
  });
});
