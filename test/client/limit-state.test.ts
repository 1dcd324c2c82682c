// client.limitState(): what someone watching the client (the editor's sidebar) is told of its limits,
// checked against what the limiter, the transport and the poller actually do: against the local engine,
// and with a fake clock for the poller's next poll.
import assert from 'node:assert/strict';
import sinon from 'sinon';
import { MediaEnhanceClient, type WaitEvent } from '../../src';
import { systemClock } from '../../src/client/clock';
import { DEFAULT_POLL_INTERVALS } from '../../src/client/poll-intervals';
import { RateLimitLog } from '../../src/client/limit-state';
import { RollingWindowLimiter } from '../../src/client/rate-limiter';
import { StatusPoller } from '../../src/client/status-poller';
import { ENDPOINT_IDS } from '../../src/contract/endpoints';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

describe('client limit state', function () {
  this.timeout(60_000);
  const wav = makeWav(0.1, 8_000);
  let engine: TestEngine | undefined;
  const clients: MediaEnhanceClient[] = [];

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await engine?.dispose();
    engine = undefined;
  });

  function clientOf(running: TestEngine, options: Partial<ConstructorParameters<typeof MediaEnhanceClient>[0]> = {}) {
    const client = new MediaEnhanceClient({ baseUrl: running.url, apiKey: running.apiKey, ...options });
    clients.push(client);
    return client;
  }

  const upload = (client: MediaEnhanceClient) => client.limitState().operations.find((op) => op.id === 'uploadMedia')!;

  it('lists every operation in order with its limit and window, and nothing used at first', async () => {
    engine = await startTestEngine();
    const state = clientOf(engine).limitState();
    assert.deepEqual(
      state.operations.map((op) => op.id),
      [...ENDPOINT_IDS],
    );
    const byId = Object.fromEntries(state.operations.map((op) => [op.id, op]));
    assert.deepEqual(byId.uploadMedia, {
      id: 'uploadMedia',
      used: 0,
      limit: 10,
      windowMs: 60_000,
      queued: 0,
      rateLimitedUntil: null,
      tooManyRequests: 0,
    });
    assert.equal(byId.enhanceAudio.limit, null);
    assert.deepEqual(state.poller, { watching: 0, nextPollAt: null });
  });

  it('shows a call waiting for a place as queued, and the window full until its first place frees', async () => {
    engine = await startTestEngine({ limits: { uploadMedia: 1 } });
    const client = clientOf(engine, { limits: { uploadMedia: 1 } });
    const before = Date.now();
    await client.uploadMedia({ file: wav, fileName: 'first.wav' });
    const after = Date.now();
    const controller = new AbortController();
    const queued = client.uploadMedia({ file: wav, fileName: 'second.wav' }, { signal: controller.signal });
    queued.catch(() => undefined);
    // The file is read before the call asks for its place.
    while (upload(client).queued === 0) await new Promise((r) => setTimeout(r, 5));
    const state = upload(client);
    assert.equal(state.used, 1);
    assert.equal(state.queued, 1);
    assert.ok(state.rateLimitedUntil !== null, 'rate limited while the window is full');
    assert.ok(state.rateLimitedUntil >= before + 60_000 && state.rateLimitedUntil <= after + 60_000);
    controller.abort();
    await assert.rejects(queued);
    assert.equal(upload(client).queued, 0, 'an aborted call leaves the queue');
  });

  it('counts every 429 and shows the wait it causes until the retry is sent', async () => {
    // A short window: the engine's 429 says the window is full, and the client waits for it to pass.
    engine = await startTestEngine({ windowMs: 1_000, faults: { forced429: 2 } });
    const client = clientOf(engine, { windowMs: 1_000 });
    const seen: { event: WaitEvent; until: number | null; at: number }[] = [];
    const media = await client.uploadMedia(
      { file: wav, fileName: 'limited.wav' },
      {
        onWait: (event) => {
          const at = Date.now(); // first: the state is read after it
          seen.push({ event, at, until: upload(client).rateLimitedUntil });
        },
      },
    );
    assert.ok(media.uid);
    const limited = seen.filter((s) => s.event.reason === 'rate-limited');
    assert.equal(limited.length, 2, 'told of both waits');
    // The client notes the wait a moment before it tells of it: 50 ms covers that moment on a loaded
    // machine, and is far less than the 429's wait beyond the 1 s window the state would show without it.
    for (const { event, until, at } of limited) {
      assert.ok(
        until !== null && until >= at + event.waitMs - 50,
        `until ${until} covers the wait of ${event.waitMs} ms`,
      );
    }
    const after = upload(client);
    assert.equal(after.tooManyRequests, 2);
    assert.equal(engine.requests().filter((r) => r.status === 429).length, 2, 'as many as the engine answered');
    assert.equal(
      client
        .limitState()
        .operations.filter((op) => op.id !== 'uploadMedia')
        .reduce((n, op) => n + op.tooManyRequests, 0),
      0,
      'counted for the operation that met them only',
    );
  });

  it('shows the media the poller follows while a wait is on', async () => {
    engine = await startTestEngine({ processingDelayMs: 1_500 });
    const client = clientOf(engine);
    const media = await client.uploadMedia({ file: wav, fileName: 'slow.wav' });
    const waiting = client.waitForCompletion(media.uid);
    await new Promise((r) => setTimeout(r, 300));
    const { poller } = client.limitState();
    assert.equal(poller.watching, 1);
    assert.ok(poller.nextPollAt !== null && poller.nextPollAt > Date.now(), 'the next poll lies ahead');
    assert.ok(poller.nextPollAt <= Date.now() + 5_000, 'within the first intervals (3 to 5 s)');
    await waiting;
    assert.deepEqual(client.limitState().poller, { watching: 0, nextPollAt: null });
  });
});

describe('StatusPoller next poll', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ now: 7_000_000 });
  });
  afterEach(() => clock.restore());

  it('is the earliest due media, not before the metadata window has a place', async () => {
    const limiter = new RollingWindowLimiter(2, 10_000, systemClock);
    const poller = new StatusPoller({
      limiter,
      clock: systemClock,
      random: () => 0,
      intervals: DEFAULT_POLL_INTERVALS,
      fetchMetadata: (uid, slot) => {
        slot.settle();
        return Promise.resolve({ uid, enhancement_status: 'PROCESSING' });
      },
    });
    const start = Date.now();
    const a = poller.wait('a');
    await clock.tickAsync(0);
    // Asked at once; the next poll of a lone media is after the first interval (3 s with random 0).
    assert.equal(poller.nextPollAt(), start + DEFAULT_POLL_INTERVALS.initialMs[0]);
    const b = poller.wait('b');
    const c = poller.wait('c');
    await clock.tickAsync(0);
    // b took the window's second place; c is due now but waits for the first place to free (10 s after a's poll).
    assert.equal(poller.nextPollAt(), start + 10_000);
    poller.close();
    await Promise.allSettled([a, b, c]);
    assert.equal(poller.nextPollAt(), null);
  });
});

describe('rate limit state', () => {
  it('says no window is full while every place is free, even when the clock ticks while the state is read', () => {
    // A busy machine: a millisecond passes between any two reads of the clock.
    let ms = 1_000_000;
    const clock = { ...systemClock, now: () => ms++ };
    const limiters = new Map(ENDPOINT_IDS.map((id) => [id, new RollingWindowLimiter(10, 60_000, clock)]));
    const operations = new RateLimitLog(clock).operations((id) => limiters.get(id)!);
    assert.deepEqual(
      operations.filter((op) => op.rateLimitedUntil !== null),
      [],
    );
  });
});
