// The download node's "attach loudness report as msg.loudness": the report of the built-in engine when
// ticked, nothing when not (the default).
import assert from 'node:assert/strict';
import type { LoudnessReport } from '../../src/contract/loudness-report';
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
