// Nodes that share one config node share its client: its rate limiters keep them, together, within
// the service's limits. And the API key never shows in the flow, a message, a status or a log line.
import assert from 'node:assert/strict';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { makeWav } from '../fixtures/media';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  placed,
  remoteConfig,
  sleep,
  statusTexts,
  stopHelper,
  TAB,
} from './flow-helper';

const LIMIT = 3;
const WINDOW_MS = 1_500;

describe('nodes: one config node, one client', function () {
  this.timeout(60_000);
  let engine: TestEngine;

  before(async () => {
    await initHelper();
    engine = await startTestEngine({ limits: { uploadMedia: LIMIT }, windowMs: WINDOW_MS });
  });
  after(async () => {
    await stopHelper();
    await engine.dispose();
  });
  afterEach(() => helper.unload());

  it('15 uploads split across two upload nodes: all accepted, zero 429s, never over the limit in any window', async () => {
    await loadFlow(
      [
        TAB,
        remoteConfig(engine.url, { limitUpload: String(LIMIT) }),
        { id: 'upload-a', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['accepted']] },
        { id: 'upload-b', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['accepted']] },
        { id: 'accepted', type: 'helper', z: 'tab' },
        ...catchAll(),
      ],
      { svc: { apiKey: engine.apiKey } },
    );
    const accepted = collect(helper.getNode('accepted'));
    const caught = collect(helper.getNode('caught'));
    for (let i = 0; i < 15; i++)
      helper.getNode(i % 2 ? 'upload-b' : 'upload-a').receive({ payload: makeWav(0.1, 8000), index: i });
    const deadline = Date.now() + 40_000;
    while (accepted.length + caught.length < 15 && Date.now() < deadline) await sleep(100);

    assert.equal(caught.length, 0, JSON.stringify(caught.map((m) => m.error)));
    assert.equal(new Set(accepted.map((m) => m.media_uid)).size, 15);
    const uploads = engine.requests().filter((r) => r.method === 'POST' && r.path === '/v2/medias');
    assert.equal(uploads.filter((r) => r.status === 429).length, 0, 'no 429 answers');
    for (const first of uploads) {
      const inWindow = uploads.filter((r) => r.at >= first.at && r.at < first.at + WINDOW_MS).length;
      assert.ok(inWindow <= LIMIT, `${inWindow} uploads within ${WINDOW_MS} ms of ${first.at}`);
    }
    const texts = [...statusTexts(helper.getNode('upload-a')), ...statusTexts(helper.getNode('upload-b'))];
    assert.ok(
      texts.some((t) => /^queued \d+(st|nd|rd|th)/.test(String(t))),
      `a waiting upload says where it is in line: ${JSON.stringify(texts)}`,
    );
    assert.ok(
      texts.some((t) => /^queued \d+(st|nd|rd|th), about \d+ s$/.test(String(t))),
      `and roughly how long it waits: ${JSON.stringify(texts)}`,
    );
  });

  it('the API key is in no exported flow, message, status or log line, even when the service refuses it', async () => {
    const flow = [
      TAB,
      remoteConfig(engine.url),
      { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['wait', 'seen']] },
      { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', wires: [['download', 'seen']] },
      { id: 'download', type: 'media-enhance-download', z: 'tab', service: 'svc', output: 'buffer', wires: [['seen']] },
      { id: 'seen', type: 'helper', z: 'tab' },
      ...catchAll(),
    ];
    const texts: string[] = [];
    for (const apiKey of [engine.apiKey, 'wrong-key-7f3a9c']) {
      // Deployed as the editor deploys: the key inside the config node, for the runtime to take out.
      await loadFlow(flow);
      await helper.setFlows(
        placed(flow.map((n) => ((n as { id: string }).id === 'svc' ? { ...n, credentials: { apiKey } } : n))),
        'full',
      );
      const seen = collect(helper.getNode('seen'));
      const caught = collect(helper.getNode('caught'));
      helper.getNode('upload').receive({ payload: makeWav(0.1, 8000) });
      const deadline = Date.now() + 20_000;
      while (seen.length < 3 && caught.length === 0 && Date.now() < deadline) await sleep(100);
      if (apiKey === engine.apiKey) assert.equal(seen.length, 3, 'the flow ran through');
      else assert.equal((caught[0].error as { code: string }).code, 'AUTH');
      texts.push(
        JSON.stringify(helper._redNodes.getFlows().flows),
        ...[...seen, ...caught].map((msg) =>
          JSON.stringify(msg, (_k, v: unknown) =>
            (v as { type?: unknown } | null)?.type === 'Buffer' ? undefined : v,
          ),
        ),
        ...['upload', 'wait', 'download'].flatMap((id) => statusTexts(helper.getNode(id)).map(String)),
        ...helper
          .log()
          .getCalls()
          .map((call) => JSON.stringify(call.args)),
      );
      await helper.unload();
      for (const text of texts) {
        assert.ok(!text.includes(apiKey), `the key leaked into: ${text.slice(0, 200)}`);
      }
    }
    assert.ok(
      texts.some((t) => t.includes('API key refused') || t.includes('AUTH')),
      'the refusal itself is reported',
    );
  });
});
