// Deploys keep the built-in engine: a full deploy that leaves a config node's engine settings as they
// were (here: a helper node renamed) keeps the engine on its port with its job going on; a changed engine
// setting restarts it, and the job resumes in the new engine from its accepted state.
import assert from 'node:assert/strict';
import type { MediaEnhanceClient } from '../../src';
import type { MediaEnhanceConfigNode } from '../../src/nodes/config-node';
import { enginesStopped } from '../../src/nodes/kept-engines';
import { makeWav } from '../fixtures/media';
import { helper, initHelper, loadFlow, sleep, stopHelper, TAB } from './flow-helper';

const PROCESSING_MS = 4_000;

function flow(debugName: string, config: Record<string, unknown> = {}): object[] {
  return [
    TAB,
    { id: 'svc', type: 'media-enhance-config', name: 'local', mode: 'local', ...config },
    { id: 'debug', type: 'helper', z: 'tab', name: debugName },
  ];
}

async function clientOf(): Promise<MediaEnhanceClient> {
  return (helper.getNode('svc') as unknown as MediaEnhanceConfigNode).getClient();
}

describe('nodes: deploys keep the built-in engine', function () {
  this.timeout(60_000);

  before(async () => {
    await initHelper({ processingDelayMs: PROCESSING_MS });
  });
  after(() => stopHelper());
  afterEach(() => helper.unload());

  it('a full deploy that renames a debug node leaves the port and a running job untouched; a changed engine setting restarts it and the job resumes', async () => {
    await loadFlow(flow('before'));
    const first = await clientOf();
    const media = await first.uploadMedia({ file: makeWav(0.3, 16_000), fileName: 'clip.wav' });
    let seen = await first.getMetadata(media.uid);
    for (let i = 0; seen.enhancement_status !== 'PROCESSING' && i < 50; i++) {
      await sleep(20);
      seen = await first.getMetadata(media.uid);
    }
    assert.equal(seen.enhancement_status, 'PROCESSING');

    await helper.setFlows(flow('renamed'), 'full');
    const second = await clientOf();
    assert.notEqual(second, first, 'the config node itself was recreated');
    assert.equal(second.baseUrl, first.baseUrl, 'the same engine, on the same port');
    const during = await second.getMetadata(media.uid);
    assert.equal(during.enhancement_status, 'PROCESSING');
    assert.equal(during.updated_at, seen.updated_at, 'the job went on: it did not start its processing over');
    assert.equal((await second.waitForCompletion(media.uid)).enhancement_status, 'COMPLETED');

    // A changed engine setting: a new engine (another port), and a job in flight resumes there.
    const next = await second.uploadMedia({ file: makeWav(0.3, 16_000), fileName: 'next.wav' });
    await helper.setFlows(flow('renamed', { limitMetadata: '500' }), 'full');
    const third = await clientOf();
    assert.notEqual(third.baseUrl, second.baseUrl, 'a changed engine setting starts a new engine');
    assert.equal((await third.getMetadata(media.uid)).enhancement_status, 'COMPLETED', 'what was done stays done');
    const resumed = await third.waitForCompletion(next.uid);
    assert.equal(resumed.enhancement_status, 'COMPLETED');
    await assert.rejects(second.getMetadata(next.uid), { code: 'ABORTED' }, "the old config node's client is closed");
  });

  it('a deleted config node stops its engine at once', async () => {
    await loadFlow(flow('one'));
    const client = await clientOf();
    const url = client.baseUrl;
    await helper.setFlows([TAB, { id: 'debug', type: 'helper', z: 'tab', name: 'alone' }], 'full');
    await assert.rejects(fetch(`${url}/v2/medias/x/metadata`), 'nothing listens on the port any more');
  });

  it('when the flows stop without a deploy (Node-RED shutting down), the engine stops at once, not kept for a deploy that will not come', async () => {
    await loadFlow(flow('shutdown'));
    const url = (await clientOf()).baseUrl;
    await helper.unload(); // stops the flows as RED.stop() does: the nodes close without `removed`
    await enginesStopped();
    await assert.rejects(fetch(`${url}/v2/medias/x/metadata`), 'nothing listens on the port any more');
  });
});
