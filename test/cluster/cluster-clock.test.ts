// Retention over instances whose clocks disagree: every time it compares is on one clock (Redis's), so
// an instance hours ahead that holds the turn removes nothing just finished on another.
import assert from 'node:assert/strict';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { getJson, tempFolder, uploadWav } from './engine-cluster';

const HOUR = 3600_000;

describe('cluster: instances with clocks apart', function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let data: ReturnType<typeof tempFolder>;
  let ahead: TestEngine;
  let onTime: TestEngine;
  const removed: string[] = [];

  before(async () => {
    redis = await startTestRedis();
    data = tempFolder('cluster-clock-');
    const shared = { redis: redis.url, apiKeys: ['cluster-test-key'], workers: 1 };
    const retention = { maxAgeMs: 2 * HOUR, graceMs: HOUR, sweepIntervalMs: 200 };
    // Three hours ahead, started first: its start sweep takes the retention's turn.
    ahead = await startTestEngine(
      {
        ...shared,
        retention,
        clock: () => Date.now() + 3 * HOUR,
        onRemoved: ({ record, reason }) => removed.push(`${record.uid}: ${reason}`),
      },
      data.path,
    );
    await new Promise((r) => setTimeout(r, 500));
    onTime = await startTestEngine({ ...shared, retention }, data.path);
  });

  after(async () => {
    await onTime?.close();
    await ahead?.close();
    await redis?.stop();
    data?.remove();
  });

  it('keeps media just finished on an instance behind the one holding the turn', async () => {
    const uploads = await Promise.all([0, 1, 2, 3].map(() => uploadWav(onTime.url, makeWav(0.5, 16_000))));
    const uids = uploads.map((u) => u.body.uid as string);
    // Followed on the instance on time only: a request on the one ahead would note a use on its clock.
    for (const uid of uids) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const answer = await getJson(`${onTime.url}/v2/medias/${uid}/metadata`);
        assert.equal(answer.status, 200, `media ${uid} is kept: ${JSON.stringify(answer.body)}; ${removed.join('; ')}`);
        if (answer.body.enhancement_status === 'COMPLETED') break;
        assert.ok(Date.now() < deadline, `media ${uid} did not complete`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    await new Promise((r) => setTimeout(r, 2_000)); // ten sweeps of the instance ahead
    for (const uid of uids) {
      const answer = await getJson(`${onTime.url}/v2/medias/${uid}/metadata`);
      assert.equal(answer.status, 200, `media ${uid} is kept: ${JSON.stringify(answer.body)}`);
    }
    assert.deepEqual(removed, []);
  });
});
