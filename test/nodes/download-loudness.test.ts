// The download node's "attach loudness report as msg.loudness": the report of the built-in engine when
// ticked, nothing when not (the default).
import assert from 'node:assert/strict';
import type { LoudnessReport } from '../../src/contract/loudness-report';
import { sidebarRegistry } from '../../src/sidebar/registry';
import { makeWav } from '../fixtures/media';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  localConfig,
  nextInput,
  stopHelper,
  TAB,
} from './flow-helper';

function flow(download: Record<string, unknown>): object[] {
  return [
    TAB,
    localConfig(),
    {
      id: 'upload',
      type: 'media-enhance-upload',
      z: 'tab',
      service: 'svc',
      loudnessTarget: '-20',
      truePeak: '-2',
      // A tone is no speech: LARK_V2's DeepFilterNet3 takes it for noise; FINCH passes it to the loudness stage.
      model: 'FINCH',
      wires: [['wait']],
    },
    { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', timeout: '60', wires: [['download']] },
    {
      id: 'download',
      type: 'media-enhance-download',
      z: 'tab',
      service: 'svc',
      output: 'buffer',
      ...download,
      wires: [['downloaded']],
    },
    { id: 'downloaded', type: 'helper', z: 'tab' },
    ...catchAll(),
  ];
}

describe('nodes: download with the loudness report', function () {
  this.timeout(60_000);
  const seconds = 5;
  const wav = makeWav(seconds, 16_000);

  before(() => initHelper());
  after(stopHelper);
  afterEach(() => helper.unload());

  it('sets msg.loudness to the media report when "attach loudness report" is ticked', async () => {
    await loadFlow(flow({ attachLoudness: true }));
    const errors = collect(helper.getNode('caught'));
    const downloaded = nextInput(helper.getNode('downloaded'));
    helper.getNode('upload').receive({ payload: wav, filename: 'tone.wav' });
    const out = await downloaded;
    assert.ok(Buffer.isBuffer(out.payload), 'the file came too');
    const report = out.loudness as LoudnessReport;
    assert.ok(report, 'msg.loudness is set');
    assert.equal(report.uid, out.media_uid);
    assert.equal(report.target_lufs, -20);
    assert.equal(report.true_peak_limit_dbtp, -2);
    assert.equal(report.input.short_term_lufs.length, seconds);
    assert.equal(report.output.true_peak_per_second_dbtp.length, seconds);
    assert.ok(Math.abs(report.output.integrated_lufs! + 20) <= 0.5, `output ${report.output.integrated_lufs} LUFS`);
    assert.equal(errors.length, 0);
  });

  for (const [what, settings] of [
    ['unticked', { attachLoudness: false }],
    ['saved without the setting (the default)', {}],
  ] as const) {
    it(`leaves msg.loudness out when ${what}`, async () => {
      await loadFlow(flow(settings));
      const downloaded = nextInput(helper.getNode('downloaded'));
      helper.getNode('upload').receive({ payload: wav, filename: 'tone.wav' });
      const out = await downloaded;
      assert.ok(Buffer.isBuffer(out.payload));
      assert.equal('loudness' in out, false);
    });
  }
});

describe('nodes: download with the loudness report, before the media is processed', function () {
  this.timeout(60_000);

  // The engine takes its time, so the original (PRE) can be fetched while the media is still processing.
  before(() => initHelper({ processingDelayMs: 20_000 }));
  after(stopHelper);
  afterEach(() => helper.unload());

  it('delivers the original with msg.loudness null and a warning that says why, and lists no result', async () => {
    await loadFlow([
      TAB,
      localConfig(),
      { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['download']] },
      {
        id: 'download',
        type: 'media-enhance-download',
        z: 'tab',
        service: 'svc',
        output: 'buffer',
        step: 'PRE',
        attachLoudness: true,
        wires: [['downloaded']],
      },
      { id: 'downloaded', type: 'helper', z: 'tab' },
      ...catchAll(),
    ]);
    const errors = collect(helper.getNode('caught'));
    const downloaded = nextInput(helper.getNode('downloaded'));
    const wav = makeWav(1, 16_000);
    helper.getNode('upload').receive({ payload: wav, filename: 'early.wav' });
    const out = await downloaded;
    assert.deepEqual(out.payload, wav, 'the original, as uploaded');
    assert.equal(out.loudness, null);
    const warnings = helper
      .getNode('download')
      .warn.getCalls()
      .map((call) => String(call.args[0]));
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0], new RegExp(`media ${String(out.media_uid)}: sent without its loudness report`));
    assert.equal(errors.length, 0);
    // Only the enhanced file finishes a media: the sidebar lists no result for an original fetched early.
    assert.equal(
      sidebarRegistry.snapshot().results.some((row) => row.uid === out.media_uid),
      false,
    );
  });
});
