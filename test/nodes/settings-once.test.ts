// A message's enhancement is merged with its overrides and checked once in the node process (the
// client keeps its own check, as its public API's guard): not again at each step of the message.
import assert from 'node:assert/strict';
import sinon from 'sinon';
import * as enhancement from '../../src/nodes/enhancement';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { catchAll, helper, initHelper, loadFlow, nextInput, remoteConfig, stopHelper, TAB } from './flow-helper';

describe('nodes: settings checked once per message', function () {
  this.timeout(90_000);
  let engine: TestEngine;
  const input = makeWav(1, 16_000);

  before(async () => {
    await initHelper();
    engine = await startTestEngine();
  });
  after(async () => {
    await stopHelper();
    await engine.dispose();
  });
  afterEach(async () => {
    sinon.restore();
    await helper.unload();
  });

  for (const type of ['media-enhance-file', 'media-enhance-upload']) {
    it(`${type}: merges and checks the node's settings and msg.enhancement once for a message`, async () => {
      await loadFlow(
        [
          TAB,
          remoteConfig(engine.url),
          { id: 'node', type, z: 'tab', service: 'svc', output: 'buffer', loudnessTarget: '-18', wires: [['out']] },
          { id: 'out', type: 'helper', z: 'tab' },
          ...catchAll(),
        ],
        { svc: { apiKey: engine.apiKey } },
      );
      const merges = sinon.spy(enhancement, 'withOverrides');
      const out = nextInput(helper.getNode('out'));
      helper.getNode('node').receive({ payload: input, filename: 'talk.wav', enhancement: { true_peak: -2 } });
      await out;
      assert.equal(merges.callCount, 1, 'one merge-and-check for the message');
      assert.deepEqual(merges.firstCall.returnValue, { loudness_target: -18, true_peak: -2 });
    });
  }
});
