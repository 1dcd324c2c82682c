// What a redeploy or stop does to messages in flight: each gets done(), nothing is sent afterwards,
// and the node leaves no timer or request behind. Also: many messages at once stay independent.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { makeWav } from '../fixtures/media';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  nextInput,
  placed,
  remoteConfig,
  sleep,
  statusTexts,
  stopHelper,
  TAB,
  unloadFlow,
} from './flow-helper';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- an untyped CommonJS module, typed by the cast below
const { hooks } = require('@node-red/util') as {
  hooks: {
    add(id: string, fn: (event: { msg: { topic?: unknown }; node: { id: string } }) => void): void;
    remove(id: string): void;
  };
};

/**
 * Resolves when a node calls done() for a message with this topic, as Node-RED's onComplete hook sees
 * it. (A Complete node cannot show it: one scoped to the node is restarted with it on redeploy.)
 */
function doneFor(nodeId: string, topic: string): Promise<void> {
  return new Promise((resolve) => {
    hooks.add('onComplete.lifecycle-test', ({ msg, node }) => {
      if (node.id !== nodeId || msg.topic !== topic) return;
      hooks.remove('onComplete.lifecycle-test');
      resolve();
    });
  });
}

function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
}

describe('nodes: redeploy and stop while messages are in flight', function () {
  this.timeout(60_000);
  let engine: TestEngine;
  before(async () => {
    await initHelper();
    engine = await startTestEngine({ processingDelayMs: 3_000, limits: { uploadMedia: null } });
  });
  after(async () => {
    await stopHelper();
    await engine.dispose();
  });
  afterEach(unloadFlow);

  function flow(waitName: string, keepAcrossRestarts = true): object[] {
    return [
      TAB,
      remoteConfig(engine.url),
      {
        id: 'wait',
        type: 'media-enhance-wait',
        z: 'tab',
        name: waitName,
        service: 'svc',
        keepAcrossRestarts,
        wires: [['completed']],
      },
      { id: 'completed', type: 'helper', z: 'tab' },
      ...catchAll(),
    ];
  }

  async function uploadOne(): Promise<string> {
    const { MediaEnhanceClient } = await import('../../src/client');
    const client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
    try {
      return (await client.uploadMedia({ file: makeWav(0.2, 8000) })).uid;
    } finally {
      await client.close();
    }
  }

  it('redeploying a waiting node calls done() for its message, sends nothing later and leaves no timer', async () => {
    // Not kept across restarts: the new node must not take the wait over (wait-journal.test.ts covers that).
    const credentials = { svc: { apiKey: engine.apiKey } };
    await loadFlow(flow('first', false), credentials);
    const uid = await uploadOne();
    // A first message opens the shared client's connection, whose keep-alive timer is the client's, not the node's.
    const primed = nextInput(helper.getNode('caught'));
    helper.getNode('wait').receive({ media_uid: 'no-such-media' });
    await primed;
    await sleep(300);
    const timersBefore = activeTimers();
    const completed = collect(helper.getNode('completed'));
    const caught = collect(helper.getNode('caught'));
    const finished = doneFor('wait', 'in flight');
    helper.getNode('wait').receive({ media_uid: uid, topic: 'in flight' });
    await sleep(500);
    assert.ok(activeTimers() > timersBefore, 'the wait has its poll and status timers');

    // A "modified nodes" deploy: only the wait node changes; the config node and its client stay.
    await helper.setFlows(placed(flow('second', false)), 'nodes', credentials);
    await finished; // done() was called for the message in flight
    await sleep(200);
    assert.equal(activeTimers(), timersBefore, 'no timer of the old node is left');

    await sleep(4_000); // the media completes meanwhile
    assert.equal(completed.length, 0, 'nothing is sent after close');
    assert.equal(caught.length, 0, 'a redeploy is not an error');
  });

  it('a download to a file cut short by a stop leaves no file in the folder, partial or whole', async () => {
    const slow = await startTestEngine({ faults: { dripRate: 1, dripBytesPerSecond: 64 * 1024 } });
    const { MediaEnhanceClient } = await import('../../src/client');
    const client = new MediaEnhanceClient({ baseUrl: slow.url, apiKey: slow.apiKey });
    const folder = await fsp.mkdtemp(join(tmpdir(), 'me-download-'));
    try {
      const uid = (await client.uploadMedia({ file: makeWav(10, 48_000) })).uid; // ~1 MB: about 15 s at this speed
      await loadFlow(
        [
          TAB,
          remoteConfig(slow.url),
          // Not kept across restarts (kept-messages.test.ts covers the download that continues instead).
          {
            id: 'download',
            type: 'media-enhance-download',
            z: 'tab',
            service: 'svc',
            step: 'PRE',
            output: 'file',
            folder,
            keepAcrossRestarts: false,
            wires: [['saved']],
          },
          { id: 'saved', type: 'helper', z: 'tab' },
        ],
        { svc: { apiKey: slow.apiKey } },
      );
      helper.getNode('download').receive({ media_uid: uid });
      await sleep(1_500);
      assert.match(String(statusTexts(helper.getNode('download')).at(-1)), /^downloading \d+%/);
      assert.equal((await fsp.readdir(folder)).length, 1, 'the temporary file is being written');
      await helper.unload();
      assert.deepEqual(await fsp.readdir(folder), []);
    } finally {
      await client.close();
      await slow.dispose();
      await fsp.rm(folder, { recursive: true, force: true });
    }
  });

  it("stopping the flows ends a wait within Node-RED's close limit", async () => {
    await loadFlow(flow('stopping'), { svc: { apiKey: engine.apiKey } });
    const uid = await uploadOne();
    helper.getNode('wait').receive({ media_uid: uid });
    await sleep(300);
    const started = Date.now();
    await helper.unload();
    assert.ok(Date.now() - started < 15_000);
  });

  it('twenty messages in one wait node complete independently; a bad one among them fails alone', async () => {
    await loadFlow(flow('many'), { svc: { apiKey: engine.apiKey } });
    const uids = await Promise.all(Array.from({ length: 20 }, uploadOne));
    const completed = collect(helper.getNode('completed'));
    const caught = nextInput(helper.getNode('caught'));
    uids.forEach((uid, i) => helper.getNode('wait').receive({ media_uid: uid, index: i }));
    helper.getNode('wait').receive({ media_uid: 'no-such-media', index: 'bad' });
    const error = (await caught) as { error: { code: string }; index: string };
    assert.equal(error.error.code, 'NOT_FOUND');
    assert.equal(error.index, 'bad');
    const deadline = Date.now() + 30_000;
    while (completed.length < 20 && Date.now() < deadline) await sleep(100);
    assert.deepEqual(
      completed.map((m) => m.index).sort((a, b) => Number(a) - Number(b)),
      uids.map((_, i) => i),
    );
    for (const msg of completed) assert.equal(msg.media_uid, uids[msg.index as number]);
  });
});
