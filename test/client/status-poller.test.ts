import assert from 'node:assert/strict';
import sinon from 'sinon';
import { systemClock } from '../../src/client/clock';
import { MediaEnhanceError } from '../../src/client/errors';
import { RollingWindowLimiter } from '../../src/client/rate-limiter';
import { MAX_HELD_POLLS, StatusPoller } from '../../src/client/status-poller';
import type { MediaMetadata } from '../../src/client/types';
import { DEFAULT_POLL_INTERVALS } from '../../src/client/poll-intervals';

/** A pretend service: each media completes (or fails) at a set time; every metadata call is logged. */
function fakeService(finishAt: Map<string, { at: number; status?: string }>) {
  const calls: { uid: string; at: number }[] = [];
  const fetchMetadata = (uid: string): Promise<MediaMetadata> => {
    calls.push({ uid, at: Date.now() });
    const job = finishAt.get(uid);
    if (!job) return Promise.reject(new MediaEnhanceError('NOT_FOUND', `no media ${uid}`, { status: 404 }));
    const done = Date.now() >= job.at;
    return Promise.resolve({
      uid,
      enhancement_status: done ? (job.status ?? 'COMPLETED') : 'PROCESSING',
      error: job.status === 'FAILED' ? { code: 'X', message: 'bad input' } : undefined,
    });
  };
  return { calls, fetchMetadata };
}

function maxInAnyWindow(times: number[], windowMs: number): number {
  let max = 0;
  for (const t of times) max = Math.max(max, times.filter((u) => u >= t && u < t + windowMs).length);
  return max;
}

describe('StatusPoller', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ now: 5_000_000 });
  });
  afterEach(() => clock.restore());

  function makePoller(limit: number, windowMs: number, jobs: Map<string, { at: number; status?: string }>) {
    const limiter = new RollingWindowLimiter(limit, windowMs, systemClock);
    const service = fakeService(jobs);
    const poller = new StatusPoller({
      limiter,
      clock: systemClock,
      random: Math.random,
      intervals: DEFAULT_POLL_INTERVALS,
      fetchMetadata: (uid, slot) => service.fetchMetadata(uid).finally(() => slot.settle()),
    });
    return { poller, service, limiter };
  }

  it('asks at once, then every 3 to 5 s, then every 5 to 10 s once the job is long', async () => {
    const start = Date.now();
    const jobs = new Map([['a', { at: start + 180_000 }]]);
    const { poller, service } = makePoller(120, 60_000, jobs);
    const done = poller.wait('a');
    await clock.tickAsync(200_000);
    await done;
    const gaps = service.calls.slice(1).map((c, i) => c.at - service.calls[i].at);
    assert.equal(service.calls[0].at, start);
    for (const [i, gap] of gaps.entries()) {
      const waited = service.calls[i].at - start;
      if (waited < 60_000) assert.ok(gap >= 3_000 && gap <= 5_000, `gap ${gap} at ${waited}`);
      else assert.ok(gap >= 5_000 && gap <= 10_000, `gap ${gap} at ${waited}`);
    }
  });

  it('holds at most MAX_HELD_POLLS polls at once, counted when each is sent; the others poll plainly, their pause apart', async () => {
    const media = MAX_HELD_POLLS + 8;
    // The window is full when the waits start: every poll planned as held is sent later, at once.
    const limiter = new RollingWindowLimiter(media, 1_000, systemClock);
    for (let i = 0; i < media; i++) limiter.tryAcquire()!.settle();
    let held = 0;
    let mostHeld = 0;
    let calls = 0;
    const poller = new StatusPoller({
      limiter,
      clock: systemClock,
      random: Math.random,
      intervals: DEFAULT_POLL_INTERVALS,
      waitOffered: () => 20,
      fetchMetadata: async (uid, slot, _signal, waitS) => {
        calls++;
        if (waitS !== undefined) mostHeld = Math.max(mostHeld, ++held);
        try {
          // A held poll is answered when its wait ends: nothing changes here.
          if (waitS !== undefined) await new Promise((resolve) => setTimeout(resolve, waitS * 1000));
          return { uid, enhancement_status: 'PROCESSING' };
        } finally {
          if (waitS !== undefined) held--;
          slot.settle();
        }
      },
    });
    const waits = Array.from({ length: media }, (_, i) =>
      poller.wait(`m${i}`, { timeoutMs: 20_000 }).catch((err: MediaEnhanceError) => err.code),
    );
    await clock.tickAsync(21_000);
    assert.deepEqual(new Set(await Promise.all(waits)), new Set(['TIMEOUT']));
    assert.equal(mostHeld, MAX_HELD_POLLS);
    // Each media asks about once per 3 s at most (held or plain), never in a loop.
    assert.ok(calls <= media * 8, `${calls} calls`);
  });

  it('shares one poll among waiters on the same media', async () => {
    const jobs = new Map([['a', { at: Date.now() + 20_000 }]]);
    const { poller, service } = makePoller(120, 60_000, jobs);
    const waits = Array.from({ length: 10 }, () => poller.wait('a'));
    await clock.tickAsync(30_000);
    const results = await Promise.all(waits);
    assert.ok(results.every((m) => m.enhancement_status === 'COMPLETED'));
    assert.ok(service.calls.length <= 8, `${service.calls.length} calls for one media`);
  });

  it('never exceeds the metadata budget with 200 waits, serves all, and starves none', async () => {
    const start = Date.now();
    const jobs = new Map(Array.from({ length: 200 }, (_, i) => [`m${i}`, { at: start + 5_000 + i * 100 }]));
    const { poller, service } = makePoller(20, 6_000, jobs);
    const finishedAt: number[] = [];
    const waits = [...jobs.keys()].map((uid, i) => poller.wait(uid).then(() => (finishedAt[i] = Date.now())));
    await clock.tickAsync(600_000);
    await Promise.all(waits);
    const times = service.calls.map((c) => c.at);
    assert.ok(maxInAnyWindow(times, 6_000) <= 20, `max ${maxInAnyWindow(times, 6_000)} calls in a 6 s window`);
    // Fair share: with 20 polls per 6 s for 200 media each is seen about once a minute; none waits far longer.
    const worstDelay = Math.max(...finishedAt.map((t, i) => t - jobs.get(`m${i}`)!.at));
    assert.ok(worstDelay <= 2 * 60_000 + 10_000, `worst delay ${worstDelay} ms`);
  });

  it('remembers a terminal state and does not ask for it again', async () => {
    const jobs = new Map([['a', { at: Date.now() }]]);
    const { poller, service } = makePoller(120, 60_000, jobs);
    await poller.wait('a');
    const before = service.calls.length;
    const again = await poller.wait('a');
    assert.equal(again.enhancement_status, 'COMPLETED');
    assert.equal(service.calls.length, before);
  });

  it('reports each state change once, and rejects a failed media with its reason', async () => {
    const jobs = new Map([['bad', { at: Date.now() + 8_000, status: 'FAILED' }]]);
    const { poller } = makePoller(120, 60_000, jobs);
    const seen: string[] = [];
    const wait = poller.wait('bad', { onStatus: (s) => seen.push(s) });
    const check = assert.rejects(
      wait,
      (err: MediaEnhanceError) => err.code === 'JOB_FAILED' && /bad input/.test(err.message) && err.mediaUid === 'bad',
    );
    await clock.tickAsync(20_000);
    await check;
    assert.deepEqual(seen, ['PROCESSING', 'FAILED']);
  });

  it('stops at once on an unknown media instead of polling until the timeout', async () => {
    const { poller, service } = makePoller(120, 60_000, new Map());
    const wait = poller.wait('nope', { timeoutMs: 600_000 });
    const check = assert.rejects(wait, (err: MediaEnhanceError) => err.code === 'NOT_FOUND');
    await clock.tickAsync(1);
    await check;
    assert.equal(service.calls.length, 1);
  });

  it('ends a wait with TIMEOUT, naming the last state, and stops polling that media', async () => {
    const jobs = new Map([['slow', { at: Date.now() + 3_600_000 }]]);
    const { poller, service } = makePoller(120, 60_000, jobs);
    const wait = poller.wait('slow', { timeoutMs: 20_000 });
    const check = assert.rejects(
      wait,
      (err: MediaEnhanceError) => err.code === 'TIMEOUT' && /still PROCESSING/.test(err.message),
    );
    await clock.tickAsync(20_000);
    await check;
    const calls = service.calls.length;
    await clock.tickAsync(60_000);
    assert.equal(service.calls.length, calls);
    assert.equal(poller.watching(), 0);
  });

  it('ends a wait when its signal aborts, leaving other waiters on the same media', async () => {
    const jobs = new Map([['a', { at: Date.now() + 10_000 }]]);
    const { poller } = makePoller(120, 60_000, jobs);
    const controller = new AbortController();
    const aborted = poller.wait('a', { signal: controller.signal });
    const other = poller.wait('a');
    controller.abort();
    await assert.rejects(aborted, (err: MediaEnhanceError) => err.code === 'ABORTED');
    await clock.tickAsync(20_000);
    assert.equal((await other).enhancement_status, 'COMPLETED');
  });

  it('keeps polling through a passing fault', async () => {
    const jobs = new Map([['a', { at: Date.now() + 10_000 }]]);
    const limiter = new RollingWindowLimiter(120, 60_000, systemClock);
    const service = fakeService(jobs);
    let failures = 2;
    const poller = new StatusPoller({
      limiter,
      clock: systemClock,
      random: Math.random,
      intervals: DEFAULT_POLL_INTERVALS,
      fetchMetadata: async (uid, slot) => {
        slot.settle();
        if (failures-- > 0) throw new MediaEnhanceError('NETWORK', 'ECONNRESET', { retryable: true });
        return service.fetchMetadata(uid);
      },
    });
    const wait = poller.wait('a');
    await clock.tickAsync(120_000);
    assert.equal((await wait).enhancement_status, 'COMPLETED');
  });

  it('fails every wait when closed', async () => {
    const jobs = new Map([['a', { at: Date.now() + 100_000 }]]);
    const { poller } = makePoller(120, 60_000, jobs);
    const wait = poller.wait('a');
    await clock.tickAsync(1);
    poller.close();
    await assert.rejects(wait, (err: MediaEnhanceError) => err.code === 'ABORTED');
  });
});
