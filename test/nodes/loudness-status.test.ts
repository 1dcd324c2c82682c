// A loudness target the built-in engine could not reach shows in the status of the nodes that finish the
// media (wait, download, enhance file): yellow, with the loudness reached, instead of green "done". The
// engine's bound on limiting comes from settings.js (`mediaEnhance.engine.maxLimitingDb`).
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { speechLike, writeWavFile } from '../fixtures/audio';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  localConfig,
  nextInput,
  sleep,
  stopHelper,
  TAB,
  type FlowNode,
} from './flow-helper';

/** The last status a node showed. */
function lastStatus(node: FlowNode): { fill?: string; text?: string } {
  const calls = node.status.getCalls().filter((call) => call.thisValue === node);
  return calls.at(-1)?.args[0] as { fill?: string; text?: string };
}

describe('nodes: a loudness target out of reach ends on a yellow status', function () {
  this.timeout(90_000);
  let speech: Buffer;

  before(async () => {
    const userDir = await initHelper({ maxLimitingDb: 2 });
    const path = join(userDir, 'speech.wav');
    await writeWavFile(path, { sampleRate: 44_100, channels: 1, bits: 16 }, 6, speechLike(44_100, 1, 4, -30));
    speech = await fsp.readFile(path);
  });
  after(stopHelper);
  afterEach(() => helper.unload());

  it('wait, download and enhance file say what was reached; a reachable target still ends green "done"', async () => {
    await loadFlow([
      TAB,
      localConfig(),
      {
        id: 'upload',
        type: 'media-enhance-upload',
        z: 'tab',
        service: 'svc',
        loudnessTarget: '-10',
        truePeak: '-3',
        enhancementLevel: '100',
        model: 'FINCH',
        transcode: '',
        wires: [['wait']],
      },
      {
        id: 'wait',
        type: 'media-enhance-wait',
        z: 'tab',
        service: 'svc',
        timeout: '60',
        wires: [['download', 'completed']],
      },
      {
        id: 'download',
        type: 'media-enhance-download',
        z: 'tab',
        service: 'svc',
        step: 'ENHANCED',
        output: 'buffer',
        wires: [['downloaded']],
      },
      {
        id: 'file',
        type: 'media-enhance-file',
        z: 'tab',
        service: 'svc',
        loudnessTarget: '-10',
        truePeak: '-3',
        enhancementLevel: '100',
        model: 'FINCH',
        transcode: '',
        output: 'buffer',
        folder: '',
        wires: [['filed']],
      },
      { id: 'completed', type: 'helper', z: 'tab' },
      { id: 'downloaded', type: 'helper', z: 'tab' },
      { id: 'filed', type: 'helper', z: 'tab' },
      ...catchAll(),
    ]);
    const errors = collect(helper.getNode('caught'));
    const completed = nextInput(helper.getNode('completed'));
    const downloaded = nextInput(helper.getNode('downloaded'));
    const filed = nextInput(helper.getNode('filed'));
    helper.getNode('upload').receive({ payload: speech, filename: 'talk.wav' });
    helper.getNode('file').receive({ payload: speech, filename: 'talk.wav' });

    const params = ((await completed).payload as { enhancement_params: Record<string, number | boolean> })
      .enhancement_params;
    await downloaded;
    await filed;
    assert.equal(params.target_reached, false);
    assert.ok(
      (params.limiter_reduction_db as number) <= 2.05,
      `settings.js bounds the limiting: ${params.limiter_reduction_db} dB`,
    );
    await sleep(300); // a status line changes at most every 250 ms
    for (const id of ['wait', 'download', 'file']) {
      const status = lastStatus(helper.getNode(id));
      assert.equal(status.fill, 'yellow', `${id}: ${JSON.stringify(status)}`);
      assert.match(status.text ?? '', /^done: -\d+\.\d LUFS, target -10 not reachable$/, id);
    }
    assert.equal(
      lastStatus(helper.getNode('wait')).text,
      `done: ${(params.output_loudness_lufs as number).toFixed(1)} LUFS, target -10 not reachable`,
    );

    // The same file to -30 LUFS is within reach.
    const again = nextInput(helper.getNode('filed'));
    helper.getNode('file').receive({ payload: speech, filename: 'talk.wav', enhancement: { loudness_target: -30 } });
    const reached = ((await again).media as { enhancement_params: Record<string, number | boolean> })
      .enhancement_params;
    assert.equal(reached.target_reached, true);
    await sleep(300);
    const before = (reached.input_loudness_lufs as number).toFixed(1);
    const after = (reached.output_loudness_lufs as number).toFixed(1);
    assert.deepEqual(lastStatus(helper.getNode('file')), {
      fill: 'green',
      shape: 'dot',
      text: `done: ${before} -> ${after} LUFS`,
    });
    assert.equal(errors.length, 0, JSON.stringify(errors.map((e) => e.error)));
  });
});
