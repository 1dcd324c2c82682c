// What a person watching the editor sees of a long media: the node's status and its sidebar row say how
// far the built-in engine is and about how long it has left, and the last status names the result.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { sidebarRegistry } from '../../src/sidebar/registry';
import { showMediaStatus, type Job } from '../../src/nodes/message-jobs';
import { doneStatus, processingText } from '../../src/nodes/status-text';
import { translator } from '../../src/nodes/texts';
import { speechLike, writeWavFile } from '../fixtures/audio';
import {
  catchAll,
  helper,
  initHelper,
  loadFlow,
  localConfig,
  nextInput,
  sleep,
  statusTexts,
  stopHelper,
  TAB,
} from './flow-helper';

const PROGRESS_TEXT = /^processing \d+%(, about \d+ (s|min) left)?$/;

describe('nodes: progress and the result in the status', function () {
  this.timeout(120_000);
  let userDir: string;

  before(async () => {
    userDir = await initHelper();
  });
  after(() => stopHelper());
  afterEach(() => helper.unload());

  it('words the progress and the result as a person reads them', () => {
    const t = translator({ _: (key: string) => key });
    const media = (fields: Record<string, unknown>) => ({ uid: 'u', enhancement_status: 'PROCESSING', ...fields });
    assert.equal(processingText(t, media({})), undefined, 'no progress said: none shown');
    assert.equal(processingText(t, media({ progress: { percent: 42, seconds_left: null } })), 'processing 42%');
    assert.equal(
      processingText(t, media({ progress: { percent: 42.7, seconds_left: 31.2 } })),
      'processing 42%, about 30 s left',
    );
    assert.equal(
      processingText(t, media({ progress: { percent: 97, seconds_left: 0.2 } })),
      'processing 97%, about 1 s left',
    );
    assert.equal(
      processingText(t, media({ progress: { percent: 5, seconds_left: 1500 } })),
      'processing 5%, about 25 min left',
    );
    const done = (params: Record<string, unknown>) =>
      doneStatus(t, { uid: 'u', enhancement_status: 'COMPLETED', enhancement_params: params });
    assert.deepEqual(done({ input_loudness_lufs: -32.84, output_loudness_lufs: -19.0, target_reached: true }), {
      fill: 'green',
      shape: 'dot',
      text: 'done: -32.8 -> -19.0 LUFS',
    });
    assert.deepEqual(done({}), { fill: 'green', shape: 'dot', text: 'done' }, 'nothing measured: "done"');
    assert.equal(done({ output_loudness_lufs: -14.3, loudness_target: -10, target_reached: false }).fill, 'yellow');
  });

  it('says, and logs once, that another engine took the job over, so its lower percent is no silent jump back', () => {
    const t = translator({ _: (key: string) => key });
    const media = (progress: Record<string, unknown>) => ({ uid: 'u1', enhancement_status: 'PROCESSING', progress });
    assert.equal(
      processingText(t, media({ percent: 2, seconds_left: 31, taken_over: { percent_before: 30 } })),
      'taken over by another engine, processing 2%, about 30 s left',
    );
    assert.equal(
      processingText(t, media({ percent: 0, seconds_left: null, taken_over: { percent_before: null } })),
      'taken over by another engine, processing 0%',
    );
    const shown: string[] = [];
    const logged: string[] = [];
    const job = {
      t,
      show: (status: { text: string }) => shown.push(status.text),
      log: (text: string) => logged.push(text),
    };
    const onStatus = showMediaStatus(job as unknown as Job);
    onStatus('PROCESSING', media({ percent: 30, seconds_left: 120 }));
    onStatus('PROCESSING', media({ percent: 0, seconds_left: null, taken_over: { percent_before: 30 } }));
    onStatus('PROCESSING', media({ percent: 2, seconds_left: 80, taken_over: { percent_before: 30 } }));
    assert.deepEqual(shown, [
      'processing 30%, about 2 min left',
      'taken over by another engine, processing 0%',
      'taken over by another engine, processing 2%, about 80 s left',
    ]);
    assert.deepEqual(logged, [
      'media u1: taken over by another engine (the one processing it stopped at 30%); the work started over there',
    ]);
  });

  it("shows a long media's progress and time left in the node's status and its sidebar row, then the loudness reached", async () => {
    const speech = join(userDir, 'minute.wav');
    await writeWavFile(speech, { sampleRate: 48_000, channels: 1, bits: 16 }, 60, speechLike(48_000, 1));
    await loadFlow([
      TAB,
      localConfig(),
      {
        id: 'file',
        type: 'media-enhance-file',
        z: 'tab',
        service: 'svc',
        loudnessTarget: '-19',
        truePeak: '-1',
        enhancementLevel: '100',
        // DeepFilterNet3's chain takes seconds on a minute: longer than a held status request lasts.
        model: 'LARK',
        transcode: '',
        output: 'file',
        folder: 'outbox',
        fileName: '',
        wires: [['out']],
      },
      { id: 'out', type: 'helper', z: 'tab' },
      ...catchAll(),
    ]);
    const rows = new Set<string>();
    const watching = setInterval(() => {
      for (const row of sidebarRegistry.snapshot().inFlight) if (row.nodeId === 'file') rows.add(row.stage);
    }, 50);
    try {
      const out = nextInput(helper.getNode('out'));
      helper.getNode('file').receive({ filename: speech });
      const msg = (await out) as { media: { enhancement_params: Record<string, number> } };
      await sleep(300); // a status line changes at most every 250 ms
      const texts = statusTexts(helper.getNode('file')).map(String);
      const shown = texts.filter((text) => PROGRESS_TEXT.test(text));
      assert.ok(shown.length > 0, `no progress in the status: ${JSON.stringify(texts)}`);
      assert.ok(
        [...rows].some((stage) => shown.includes(stage)),
        `the sidebar row showed ${JSON.stringify([...rows])}, the status ${JSON.stringify(shown)}`,
      );
      const params = msg.media.enhancement_params;
      assert.equal(
        texts.at(-1),
        `done: ${params.input_loudness_lufs.toFixed(1)} -> ${params.output_loudness_lufs.toFixed(1)} LUFS`,
      );
    } finally {
      clearInterval(watching);
    }
  });
});
