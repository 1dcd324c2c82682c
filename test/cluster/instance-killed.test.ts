// A machine dies mid-job (kill -9 of its engine): once the jobs' locks lapse, the other instance takes
// them up and finishes them; every media ends COMPLETED exactly once. The takeover is no silent jump
// back: the engine that takes a job over logs it, and the media's progress says so while it runs.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Redis from 'ioredis';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { CHANGES_CHANNEL } from '../../src/engine/cluster/redis-records';
import { progressOf } from '../../src/contract/media-progress';
import { readUntil } from '../fixtures/read-until';
import {
  EngineCluster,
  secondsOf,
  followToEnd,
  getBytes,
  getJson,
  sha256,
  sharedFolder,
  tempFolder,
  uploadWav,
} from './engine-cluster';

describe('cluster: an instance killed mid-job', function () {
  this.timeout(120_000);
  let redis: TestRedis;
  let cluster: EngineCluster;
  let data: ReturnType<typeof tempFolder>;
  let listener: Redis;
  /** Every change of state told on the channel, as "<uid> <state>". */
  const told: string[] = [];

  before(async () => {
    redis = await startTestRedis();
    listener = new Redis(redis.url);
    listener.on('message', (_channel: string, message: string) => told.push(message));
    await listener.subscribe(CHANGES_CHANNEL);
    data = tempFolder('cluster-killed-');
    cluster = new EngineCluster({
      redisUrl: redis.url,
      storage: sharedFolder(join(data.path, 'data')),
      // Each job spends 3 s PROCESSING: long enough to die in the middle of it.
      args: ['--workers', '2', '--processing-delay-ms', '3000', '--job-lock-ms', '2000', '--metadata-wait', '30'],
    });
    await cluster.add();
    await cluster.add();
  });

  after(async () => {
    listener?.disconnect();
    await cluster?.stop();
    await redis?.stop();
    data?.remove();
  });

  it('another instance finishes every job of the dead one, and none ends twice', async () => {
    const [doomed, survivor] = cluster.instances;
    const originals = [1, 1.1, 1.2, 1.3].map((s) => makeWav(s, 48_000));
    const uploads = await Promise.all(originals.map((wav, i) => uploadWav(cluster.instances[i % 2].url, wav)));
    const uids = uploads.map((u) => {
      assert.equal(u.status, 201, JSON.stringify(u.body));
      return u.body.uid as string;
    });
    // Two workers each: all four PROCESSING means both instances hold two jobs.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = await Promise.all(uids.map((uid) => getJson(`${survivor.url}/v2/medias/${uid}/metadata`)));
      if (states.every((s) => s.body.enhancement_status === 'PROCESSING')) break;
      assert.ok(Date.now() < deadline, 'the four media did not all start');
      await new Promise((r) => setTimeout(r, 100));
    }
    // A status request held on each media from the kill on is answered when its job is taken over (as
    // when its state changes), so a node waiting on it learns of the takeover then.
    const held = uids.map((uid) =>
      getJson(`${survivor.url}/v2/medias/${uid}/metadata?wait=30`).then(({ body }) => ({ uid, body })),
    );
    const killedAt = Date.now();
    await doomed.kill9();
    // The survivor takes the dead one's two jobs over, says so in its log, and each media's progress says
    // so while it runs there (read as a user reads the status: until it shows, or the media has ended).
    const takeover = (uid: string) => `media ${uid}: taken over from engine `;
    const log = await readUntil(
      () => survivor.errors(),
      (text) => uids.filter((uid) => text.includes(takeover(uid))).length === 2,
      "the survivor's log telling both takeovers",
    );
    const takenOver = uids.filter((uid) => log.includes(takeover(uid)));
    assert.equal(log.split('\n').filter((line) => line.includes(': taken over from engine ')).length, 2, log);
    await Promise.all(
      takenOver.map(async (uid) => {
        const seen = await readUntil(
          () => getJson(`${survivor.url}/v2/medias/${uid}/metadata`),
          ({ body }) => body.enhancement_status !== 'PROCESSING' || progressOf(body)?.taken_over !== undefined,
          `media ${uid} saying it was taken over`,
        );
        assert.deepEqual(progressOf(seen.body)?.taken_over, { percent_before: null }, JSON.stringify(seen.body));
      }),
    );
    for (const { uid, body } of await Promise.all(held))
      if (takenOver.includes(uid))
        // Answered at the takeover itself, before the work moved on there (not 10 points later: minutes on a long file).
        assert.deepEqual(
          [body.enhancement_status, progressOf(body)?.percent, progressOf(body)?.taken_over],
          ['PROCESSING', 0, { percent_before: null }],
          `the held request on media ${uid}: ${JSON.stringify(body)}`,
        );
    for (const [i, uid] of uids.entries()) {
      const ended = await followToEnd([survivor.url], uid);
      assert.equal(ended.enhancement_status, 'COMPLETED', JSON.stringify(ended));
      const pre = await getBytes(`${survivor.url}/v2/medias/${uid}/file?step=PRE`);
      assert.equal(sha256(pre.body), sha256(originals[i]));
      const enhanced = await getBytes(`${survivor.url}/v2/medias/${uid}/file`);
      assert.equal(enhanced.status, 200);
      assert.ok(
        Math.abs((await secondsOf(enhanced.body, data.path)) - (originals[i].length - 44) / 96_000) < 0.01,
        'the enhanced WAV holds every second of the original',
      );
    }
    // The dead instance's two jobs ran again after their locks lapsed: later than one job takes alone.
    assert.ok(Date.now() - killedAt >= 2000, "the dead instance's jobs waited for their locks to lapse");
    await new Promise((r) => setTimeout(r, 300)); // the last messages on their way
    for (const uid of uids)
      assert.equal(told.filter((m) => m === `${uid} COMPLETED`).length, 1, `media ${uid} COMPLETED once`);
  });
});
