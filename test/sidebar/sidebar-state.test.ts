// The sidebar's state as the nodes, the limiters and the poller make it, in flows run by
// node-red-node-test-helper (which loads the nodes only, not the plugin) against real engines: the
// registry the nodes write is read here directly, and published through a publisher given a spy.
import assert from 'node:assert/strict';
import type { MediaEnhanceClient } from '../../src/client/client';
import type { MediaEnhanceConfigNode } from '../../src/nodes/config-node';
import { sidebarRegistry } from '../../src/sidebar/registry';
import { StatePublisher } from '../../src/sidebar/state-publisher';
import {
  STATE_TOPIC,
  type InFlightRow,
  type ServiceState,
  type SidebarState,
  type StateSignal,
} from '../../src/sidebar/state';
import { makeWav } from '../fixtures/media';
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
} from '../nodes/flow-helper';

const state = (): SidebarState => sidebarRegistry.snapshot();
const service = (id = 'svc'): ServiceState => state().services.find((s) => s.id === id)!;
const operation = (id: string, op: string) => service(id).operations.find((o) => o.id === op)!;

async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(state())}`);
    await sleep(20);
  }
}

function clientOf(id = 'svc'): Promise<MediaEnhanceClient> {
  return (helper.getNode(id) as unknown as MediaEnhanceConfigNode).getClient();
}

describe('sidebar state from the nodes', function () {
  this.timeout(120_000);
  const engines: TestEngine[] = [];

  before(() => initHelper());
  after(async () => {
    await stopHelper();
  });
  afterEach(async () => {
    await helper.unload();
    sidebarRegistry.clearResults();
    await Promise.all(engines.splice(0).map((e) => e.dispose()));
  });

  async function engine(options: Parameters<typeof startTestEngine>[0]): Promise<TestEngine> {
    const started = await startTestEngine(options);
    engines.push(started);
    return started;
  }

  it('shows each config node as a service, by id and name, and none once the flow is gone', async () => {
    const running = await engine({});
    await loadFlow(
      [TAB, remoteConfig(running.url, { name: 'studio' }, 'svc'), remoteConfig(running.url, { name: '' }, 'svc2')],
      { svc: { apiKey: running.apiKey }, svc2: { apiKey: running.apiKey } },
    );
    await until(
      'both services ready',
      () => state().services.every((s) => s.url !== null) && state().services.length === 2,
    );
    const [first, second] = state().services;
    assert.equal(first.id, 'svc');
    assert.equal(first.name, 'studio');
    assert.equal(first.kind, 'remote');
    assert.equal(first.url, running.url);
    assert.equal(second.name, new URL(running.url).host, 'unnamed: its host, as the config node label');
    assert.equal(first.error, null);
    assert.equal(first.sharing, 'off');
    assert.ok(!JSON.stringify(state()).includes(running.apiKey), 'the key is in no state');
    await helper.unload();
    assert.deepEqual(state().services, []);
  });

  it('says why a service cannot be used', async () => {
    await loadFlow([TAB, remoteConfig('http://127.0.0.1:9', {}, 'svc')]);
    const shown = await until('the error', () => service()?.error ?? undefined);
    assert.match(shown, /API key/i);
    assert.equal(service().url, null);
  });

  it('shows a queued upload as queued, on the service and on its row, as the limiter holds it', async () => {
    const running = await engine({ limits: { uploadMedia: 1 } });
    await loadFlow(
      [
        TAB,
        remoteConfig(running.url, { limitUpload: '1' }),
        { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', name: 'inbox', wires: [[]] },
        ...catchAll(),
      ],
      { svc: { apiKey: running.apiKey } },
    );
    const node = helper.getNode('upload');
    for (let i = 0; i < 3; i++) node.receive({ payload: makeWav(0.1, 8000) });
    const client = await clientOf();
    await until('two queued', () => operation('svc', 'uploadMedia').queued === 2);
    const limiter = client.limitState().operations.find((o) => o.id === 'uploadMedia')!;
    const shown = operation('svc', 'uploadMedia');
    assert.equal(shown.queued, limiter.queued);
    assert.equal(shown.used, limiter.used);
    assert.equal(shown.limit, 1);
    assert.ok(
      shown.rateLimitedUntil !== null && shown.rateLimitedUntil > Date.now(),
      'rate limited until the window frees',
    );
    const rows = state().inFlight.filter((row) => row.nodeId === 'upload');
    // The first upload is sent, or already delivered (it then left the list): the other two wait.
    assert.ok(rows.length === 2 || rows.length === 3, `${rows.length} rows`);
    assert.ok(
      rows.every(
        (row) => row.nodeName === 'inbox' && row.nodeType === 'media-enhance-upload' && row.serviceId === 'svc',
      ),
    );
    const queuedRows = rows.filter((row) => /^queued (1st|2nd)/.test(row.stage));
    assert.equal(queuedRows.length, 2, JSON.stringify(rows.map((r) => r.stage)));
    // The row shows what the node's status line shows for that job (the line is drawn at most 4 times a second).
    await until('the status line', () => {
      const stages = state().inFlight.map((row) => row.stage);
      return stages.some((stage) => statusTexts(node).some((text) => String(text).startsWith(stage)));
    });
  });

  it('counts a 429 on the service that met it', async () => {
    const running = await engine({ windowMs: 1_000, faults: { forced429: 1 } });
    await loadFlow(
      [
        TAB,
        remoteConfig(running.url),
        { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['out']] },
        { id: 'out', type: 'helper', z: 'tab' },
      ],
      { svc: { apiKey: running.apiKey } },
    );
    const out = collect(helper.getNode('out'));
    helper.getNode('upload').receive({ payload: makeWav(0.1, 8000) });
    await until('the upload', () => out.length === 1);
    assert.equal(operation('svc', 'uploadMedia').tooManyRequests, 1);
    assert.equal(running.requests().filter((r) => r.status === 429).length, 1);
    // A delivered upload only started its media: it leaves the list without a result.
    assert.deepEqual(state().inFlight, []);
    assert.deepEqual(state().results, []);
  });

  it('shows a waiting media with its uid and stage, then as a result with its loudness; a failed one with its code', async () => {
    const running = await engine({ processingDelayMs: 1_500 });
    const failing = await engine({ faults: { failProcessingRate: 1 } });
    await loadFlow(
      [
        TAB,
        remoteConfig(running.url, {}, 'svc'),
        remoteConfig(failing.url, {}, 'bad'),
        { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['wait']] },
        { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', wires: [['out']] },
        { id: 'upload-bad', type: 'media-enhance-upload', z: 'tab', service: 'bad', wires: [['wait-bad']] },
        { id: 'wait-bad', type: 'media-enhance-wait', z: 'tab', service: 'bad', name: 'doomed', wires: [['out']] },
        { id: 'out', type: 'helper', z: 'tab' },
        ...catchAll(),
      ],
      { svc: { apiKey: running.apiKey }, bad: { apiKey: failing.apiKey } },
    );
    const out = collect(helper.getNode('out'));
    const caught = collect(helper.getNode('caught'));
    helper.getNode('upload').receive({ payload: makeWav(1, 16_000) });
    const waiting = await until('a processing row', () =>
      state().inFlight.find((row: InFlightRow) => row.nodeId === 'wait' && row.stage === 'processing'),
    );
    assert.ok(waiting.uid, 'the row names its media');
    assert.ok(waiting.stageSince !== null && waiting.stageSince <= Date.now());
    assert.equal(waiting.nodeName, 'wait for completion', "the type's label when the node has no name");
    assert.equal(service().poller.watching, 1, 'the poller follows it');
    assert.ok((service().poller.nextPollAt ?? 0) > Date.now() - 1_000);
    await until('the status line shows it', () =>
      statusTexts(helper.getNode('wait')).some((text) => String(text).startsWith('processing')),
    );

    await until('the message', () => out.length === 1);
    const done = await until('the result', () => state().results.find((row) => row.nodeId === 'wait'));
    const metadata = out[0].payload as { uid: string; file_name: string; enhancement_params: Record<string, number> };
    assert.equal(done.outcome, 'done');
    assert.equal(done.uid, metadata.uid);
    assert.equal(done.id, waiting.id, 'the same id as its row');
    assert.equal(done.fileName, metadata.file_name);
    assert.deepEqual(done.loudness, {
      input_lufs: metadata.enhancement_params.input_loudness_lufs,
      output_lufs: metadata.enhancement_params.output_loudness_lufs,
      target_lufs: -16, // the interface's default target: the upload names none
      output_true_peak_dbtp: metadata.enhancement_params.output_true_peak_dbtp,
    });
    assert.equal(typeof done.loudness?.output_lufs, 'number');
    assert.ok(done.finishedAt >= done.startedAt);
    assert.ok(sidebarRegistry.handled(metadata.uid));

    helper.getNode('upload-bad').receive({ payload: makeWav(0.5, 16_000) });
    const failed = await until('the failed result', () => state().results.find((row) => row.nodeId === 'wait-bad'));
    assert.equal(caught.length, 1);
    assert.equal(failed.outcome, 'failed');
    assert.equal(failed.errorCode, 'JOB_FAILED');
    assert.equal(failed.error, (caught[0].error as { message: string }).message);
    assert.equal(failed.nodeName, 'doomed');
    assert.equal(failed.serviceId, 'bad');
    assert.ok(failed.uid, 'a failed media keeps its uid');
    assert.equal(failed.loudness, null);
    assert.deepEqual(
      state().results.map((row) => row.nodeId),
      ['wait-bad', 'wait'],
      'newest first',
    );
    assert.deepEqual(state().inFlight, []);
  });

  it('signals a change a few times a second while 200 jobs run at once, the last change always', async () => {
    const running = await engine({ limits: { uploadMedia: 1_000 }, processingDelayMs: 60_000 });
    await loadFlow(
      [
        TAB,
        remoteConfig(running.url, { limitUpload: '1000' }),
        { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['out']] },
        { id: 'out', type: 'helper', z: 'tab' },
        ...catchAll(),
      ],
      { svc: { apiKey: running.apiKey } },
    );
    await clientOf();
    // Each signal as an editor follows it: the state fetched (here read) when the signal comes.
    const published: { at: number; state: SidebarState; signal: StateSignal }[] = [];
    const publisher = new StatePublisher(sidebarRegistry, (topic, data, retain) => {
      assert.equal(topic, STATE_TOPIC);
      assert.equal(retain, true);
      published.push({ at: Date.now(), state: sidebarRegistry.snapshot(), signal: data as StateSignal });
    });
    let changes = 0;
    const stopCounting = sidebarRegistry.onChange(() => changes++);
    const out = collect(helper.getNode('out'));
    publisher.start();
    try {
      await sleep(300);
      const before = published.length;
      const start = Date.now();
      const wav = makeWav(0.5, 16_000);
      for (let i = 0; i < 200; i++) helper.getNode('upload').receive({ payload: wav, index: i });
      await until('200 uploads', () => out.length === 200, 60_000);
      const elapsed = Date.now() - start;
      // Longer than the publisher's once-a-second look: a wait in a limiter ends without telling the registry.
      await sleep(1_200);
      const during = published.slice(before);
      // At most one publish per 250 ms, and the last state (nothing in flight) sent after the last change.
      const allowed = Math.ceil((elapsed + 1_200) / 250) + 1;
      assert.ok(during.length <= allowed, `${during.length} publishes in ${elapsed} ms (at most ${allowed})`);
      for (let i = 1; i < published.length; i++)
        assert.ok(published[i].at - published[i - 1].at >= 245, `publishes ${i - 1} and ${i} 250 ms apart`);
      assert.ok(changes > 10 * during.length, `${changes} changes, ${during.length} publishes`);
      assert.ok(
        during.some((p) => p.state.inFlight.length > 0),
        'jobs were seen in flight',
      );
      // The last change is signalled, the same state sent at its own time: the editor comes to show the
      // state as it is once the jobs are done, nothing in flight and no window full. A limiter's window
      // frees without telling (only the publisher's once-a-second look catches it), and on a busy machine
      // that look may come later than the sleep above: so wait for the state the user waits for.
      const settled = (s: SidebarState) =>
        s.inFlight.length === 0 && s.services.every((svc) => svc.operations.every((o) => o.rateLimitedUntil === null));
      const sameAsNow = () => {
        const last = published.at(-1)!.state;
        return settled(state()) && JSON.stringify({ ...last, sentAt: 0 }) === JSON.stringify({ ...state(), sentAt: 0 });
      };
      await until('the last published state to be the settled current one', sameAsNow);
      // Each signal a new version, and nothing else.
      published.forEach((p, i) => assert.deepEqual(p.signal, { version: i + 1 }));
      const count = published.length;
      await sleep(1_300);
      assert.equal(published.length, count, 'nothing published while nothing changes');
    } finally {
      publisher.stop();
      stopCounting();
    }
  });
});
