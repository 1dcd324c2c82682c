// Loudness only in the nodes: chosen in the dialog or in msg.enhancement, run by the built-in engine,
// also when it is reached as a remote service (a cluster behind a load balancer), which declares it when
// asked; refused before anything is sent for a remote service whose config node lists it as not declared.
import assert from 'node:assert/strict';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import {
  catchAll,
  helper,
  initHelper,
  loadFlow,
  localConfig,
  nextInput,
  remoteConfig,
  stopHelper,
  TAB,
} from './flow-helper';

type Params = { processing?: string; speech_enhancement?: { chain?: string; note?: string } };

describe('nodes: loudness only', function () {
  this.timeout(90_000);
  let engine: TestEngine;
  const input = makeWav(2, 16_000);

  before(async () => {
    await initHelper();
    engine = await startTestEngine();
  });
  after(async () => {
    await stopHelper();
    await engine.dispose();
  });
  afterEach(() => helper.unload());

  const flowWith = (service: object, node: Record<string, unknown>) => [
    TAB,
    service,
    { id: 'file', type: 'media-enhance-file', z: 'tab', service: 'svc', output: 'buffer', ...node, wires: [['out']] },
    { id: 'out', type: 'helper', z: 'tab' },
    ...catchAll(),
  ];

  it('runs on the built-in engine from the dialog setting and from msg.enhancement', async () => {
    await loadFlow(flowWith(localConfig(), { model: 'LOUDNESS_ONLY', loudnessTarget: '-20' }));
    const out = nextInput(helper.getNode('out'));
    helper.getNode('file').receive({ payload: input, filename: 'jingle.wav' });
    const params = ((await out).media as { enhancement_params: Params }).enhancement_params;
    assert.equal(params.processing, 'loudness');
    assert.equal(params.speech_enhancement?.note, 'not applied: loudness only was asked');

    await helper.unload();
    await loadFlow(flowWith(localConfig(), { model: 'FINCH' }));
    const again = nextInput(helper.getNode('out'));
    helper.getNode('file').receive({
      payload: input,
      filename: 'jingle.wav',
      enhancement: { enhancement_model: 'LOUDNESS_ONLY' },
    });
    const overridden = ((await again).media as { enhancement_params: Params }).enhancement_params;
    assert.equal(overridden.processing, 'loudness');
    assert.equal(overridden.speech_enhancement?.chain, '');
  });

  it('runs on the built-in engine reached as a remote service, which declares it when asked (once)', async () => {
    await loadFlow(flowWith(remoteConfig(engine.url), { model: 'LOUDNESS_ONLY' }), { svc: { apiKey: engine.apiKey } });
    for (const name of ['jingle.wav', 'outro.wav']) {
      const out = nextInput(helper.getNode('out'));
      helper.getNode('file').receive({ payload: input, filename: name });
      const params = ((await out).media as { enhancement_params: Params }).enhancement_params;
      assert.equal(params.processing, 'loudness', name);
    }
    const asked = engine.requests().filter((entry) => entry.path === '/v2/extensions');
    assert.deepEqual(
      asked.map((entry) => [entry.method, entry.status]),
      [['GET', 200]],
      'the service was asked once, for both messages',
    );
  });

  it('is refused before anything is sent for a remote service listed as not declaring it, naming the member', async () => {
    await loadFlow(flowWith(remoteConfig(engine.url, { extensions: 'listed', declaresOutputEncoding: true }), {}), {
      svc: { apiKey: engine.apiKey },
    });
    const before = engine.requests().length;
    const caught = nextInput(helper.getNode('caught'));
    helper.getNode('file').receive({
      payload: input,
      filename: 'jingle.wav',
      enhancement: { enhancement_model: 'LOUDNESS_ONLY' },
    });
    const { error } = (await caught) as { error: { code: string; message: string } };
    assert.equal(error.code, 'VALIDATION');
    assert.match(error.message, /enhancement_model: a value of the built-in engine's "loudness-only" extension/);
    assert.equal(engine.requests().length, before, 'nothing reached the service');
  });
});
