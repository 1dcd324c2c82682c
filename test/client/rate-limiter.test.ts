import assert from 'node:assert/strict';
import sinon from 'sinon';
import { systemClock } from '../../src/client/clock';
import { RollingWindowLimiter, type Slot } from '../../src/client/rate-limiter';

/** Takes a place and has the request answered at once. */
function sendNow(limiter: RollingWindowLimiter): void {
  const slot = limiter.tryAcquire();
  assert.ok(slot, 'a place was expected to be free');
  slot.settle();
}

describe('RollingWindowLimiter', () => {
  let clock: sinon.SinonFakeTimers;

  beforeEach(() => {
    clock = sinon.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => clock.restore());

  /** Starts `count` acquires and records when each one got its place. */
  function acquireMany(limiter: RollingWindowLimiter, count: number, signal?: AbortSignal) {
    const grantedAt: number[] = [];
    const promises = Array.from({ length: count }, (_, i) =>
      limiter.acquire({ signal }).then((slot) => {
        slot.settle();
        grantedAt[i] = Date.now();
        return slot;
      }),
    );
    return { grantedAt, promises };
  }

  it('lets `limit` requests through at once, then one more each time an old one leaves the window', async () => {
    const limiter = new RollingWindowLimiter(3, 10_000, systemClock);
    const start = Date.now();
    await clock.tickAsync(0);
    sendNow(limiter);
    await clock.tickAsync(2_000);
    sendNow(limiter);
    sendNow(limiter);
    const { grantedAt } = acquireMany(limiter, 2);
    await clock.tickAsync(30_000);
    // A rolling window frees the first place 10 s after the first send, the next 10 s after the second.
    assert.deepEqual(
      grantedAt.map((t) => t - start),
      [10_000, 12_000],
    );
  });

  it('never lets more than `limit` through in any window, under a steady queue', async () => {
    const limiter = new RollingWindowLimiter(5, 1_000, systemClock);
    const { grantedAt } = acquireMany(limiter, 40);
    await clock.tickAsync(20_000);
    assert.equal(grantedAt.length, 40);
    for (const t of grantedAt) {
      const inWindow = grantedAt.filter((u) => u >= t && u < t + 1_000).length;
      assert.ok(inWindow <= 5, `${inWindow} sends in the window starting at ${t}`);
    }
  });

  it('serves waiters first come, first served, and tells each its place in line', async () => {
    const limiter = new RollingWindowLimiter(1, 1_000, systemClock);
    sendNow(limiter);
    const order: string[] = [];
    const positions: number[] = [];
    const served = (name: string) => (slot: Slot) => {
      slot.settle();
      order.push(name);
    };
    const a = limiter.acquire({ onWait: (w) => positions.push(w.position) }).then(served('a'));
    const b = limiter.acquire().then(served('b'));
    const c = limiter.acquire().then(served('c'));
    await clock.tickAsync(5_000);
    await Promise.all([a, b, c]);
    assert.deepEqual(order, ['a', 'b', 'c']);
    assert.equal(positions[0], 1);
  });

  it("gives an aborted waiter's place in line to the next one", async () => {
    const limiter = new RollingWindowLimiter(1, 1_000, systemClock);
    sendNow(limiter);
    const controller = new AbortController();
    const aborted = limiter.acquire({ signal: controller.signal });
    const next = limiter.acquire();
    controller.abort(new Error('stop'));
    await assert.rejects(aborted, /stop/);
    assert.equal(limiter.queued(), 1);
    let nextAt = 0;
    void next.then(() => (nextAt = Date.now()));
    const start = Date.now();
    await clock.tickAsync(1_000);
    assert.equal(nextAt - start, 1_000);
  });

  it('takes back at once the place of a request that never reached the service', async () => {
    const limiter = new RollingWindowLimiter(1, 60_000, systemClock);
    const slot = limiter.tryAcquire() as Slot;
    let granted = false;
    void limiter.acquire().then(() => (granted = true));
    await clock.tickAsync(10);
    assert.equal(granted, false);
    slot.refund();
    await clock.tickAsync(0);
    assert.equal(granted, true);
  });

  it("adopts the service's count when it is higher than its own (another client shares the key)", async () => {
    const limiter = new RollingWindowLimiter(10, 60_000, systemClock);
    sendNow(limiter);
    limiter.observe({
      'x-ratelimit-limit': '10',
      'x-ratelimit-used': '9',
      'x-ratelimit-remaining': '1',
      'x-ratelimit-window': '60',
    });
    assert.equal(limiter.used(), 9);
    // Sharing seen: this client's share is what the others left (2 of 10), spread over the window.
    assert.equal(limiter.tryAcquire(), undefined);
    await clock.tickAsync(29_000);
    assert.equal(limiter.tryAcquire(), undefined);
    await clock.tickAsync(1_000);
    assert.ok(limiter.tryAcquire());
    assert.equal(limiter.tryAcquire(), undefined);
  });

  it('holds the place of a request under way until it is answered, then counts from the answer', async () => {
    const limiter = new RollingWindowLimiter(1, 1_000, systemClock);
    const slot = limiter.tryAcquire()!;
    await clock.tickAsync(5_000); // a slow upload: far longer than the window
    assert.equal(limiter.tryAcquire(), undefined, 'the service may not have counted it yet');
    slot.settle();
    assert.equal(limiter.tryAcquire(), undefined);
    await clock.tickAsync(1_000);
    assert.ok(limiter.tryAcquire());
  });

  it('gives back the place of a request the service refused with 429 (it did not count it)', () => {
    const limiter = new RollingWindowLimiter(1, 60_000, systemClock);
    const slot = limiter.tryAcquire()!;
    slot.refund();
    assert.equal(limiter.used(), 0);
  });

  it('keeps its own count when the service counts fewer', () => {
    const limiter = new RollingWindowLimiter(10, 60_000, systemClock);
    for (let i = 0; i < 4; i++) sendNow(limiter);
    limiter.observe({ 'x-ratelimit-used': '1', 'x-ratelimit-limit': '10' });
    assert.equal(limiter.used(), 4);
  });

  it("adopts the service's window length and a lower limit, but keeps a lower configured one", () => {
    const limiter = new RollingWindowLimiter(120, 60_000, systemClock);
    limiter.observe({ 'x-ratelimit-limit': '5', 'x-ratelimit-window': '2' });
    assert.equal(limiter.currentLimit(), 5);
    assert.equal(limiter.currentWindowMs(), 2_000);
    const stricter = new RollingWindowLimiter(3, 60_000, systemClock);
    stricter.observe({ 'x-ratelimit-limit': '10' });
    assert.equal(stricter.currentLimit(), 3);
  });

  it('counts at most the limit from X-RateLimit-Used, and ignores counts and windows that are not sane', () => {
    const limiter = new RollingWindowLimiter(10, 60_000, systemClock);
    limiter.observe({ 'x-ratelimit-used': '3000000' });
    assert.equal(limiter.used(), 0, 'a count above 100000 is not believed');
    limiter.observe({ 'x-ratelimit-used': '50000' });
    assert.equal(limiter.used(), 10, 'a large sane count fills the window to its limit, no further');
    const other = new RollingWindowLimiter(10, 60_000, systemClock);
    for (const count of ['-3', '2.5', '1e3', '0x10', 'NaN', ' '])
      other.observe({ 'x-ratelimit-used': count, 'x-ratelimit-limit': count });
    assert.equal(other.used(), 0);
    assert.equal(other.currentLimit(), 10);
    for (const seconds of ['-3', '0', '1e3', 'NaN', '86401']) other.observe({ 'x-ratelimit-window': seconds });
    assert.equal(other.currentWindowMs(), 60_000, 'no window of 0, below 0 or longer than a day is believed');
  });

  it('learns a limit for an operation that had none (v1) from the headers', () => {
    const limiter = new RollingWindowLimiter(null, 60_000, systemClock);
    assert.equal(limiter.nextFreeAt(), Date.now());
    limiter.observe({ 'x-ratelimit-limit': '2', 'x-ratelimit-used': '2', 'x-ratelimit-window': '60' });
    assert.equal(limiter.tryAcquire(), undefined);
  });

  it('after a 429 with Retry-After, frees the extra places when the service says', async () => {
    const limiter = new RollingWindowLimiter(2, 60_000, systemClock);
    limiter.observe(
      { 'x-ratelimit-limit': '2', 'x-ratelimit-used': '2', 'x-ratelimit-remaining': '0', 'x-ratelimit-window': '60' },
      7_000,
    );
    assert.equal(limiter.nextFreeAt() - Date.now(), 7_000);
    let at = 0;
    const start = Date.now();
    void limiter.acquire().then(() => (at = Date.now()));
    await clock.tickAsync(8_000);
    assert.equal(at - start, 7_000);
  });

  it('fails every waiter when rejected all (client closed)', async () => {
    const limiter = new RollingWindowLimiter(1, 60_000, systemClock);
    sendNow(limiter);
    const waiting = [limiter.acquire(), limiter.acquire()];
    limiter.rejectAll(new Error('closed'));
    for (const w of waiting) await assert.rejects(w, /closed/);
    assert.equal(limiter.queued(), 0);
  });
});
