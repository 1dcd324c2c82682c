// The sidebar tab's texts and markup, without a browser: what a service block, an in-flight row, a
// result and a detail view say for states of known shape (texts from the tab's own catalog, as the
// editor looks them up); the catalog and the code agree key for key; and the built browser script runs
// on its own and draws the same chart as the code the tests call.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createContext, runInContext } from 'node:vm';
import { enhancementParams } from '../../src/enhance/report';
import type { Translate } from '../../src/editor/sidebar/format';
import { loudnessChart } from '../../src/editor/sidebar/loudness-chart';
import { playedSteps, playUrl, renderDetail } from '../../src/editor/sidebar/render-detail';
import type { ResultDetails } from '../../src/editor/sidebar/shapes';
import { renderHelp } from '../../src/editor/sidebar/render-help';
import { renderInFlight, renderResults } from '../../src/editor/sidebar/render-jobs';
import { renderServices } from '../../src/editor/sidebar/render-services';
import { renderStreams } from '../../src/editor/sidebar/render-streams';
import { renderStorage } from '../../src/editor/sidebar/render-storage';
import type { LoudnessReport, ResultRow, ServiceState } from '../../src/editor/sidebar/shapes';
import { SIDEBAR_SCRIPT_FILE } from '../../src/editor/sidebar-script';

const ROOT = join(__dirname, '..', '..', '..');
const CATALOG = JSON.parse(
  readFileSync(join(ROOT, 'plugins', 'locales', 'en-US', 'media-enhance-sidebar.json'), 'utf8'),
) as Record<string, unknown>;

function lookUp(key: string): unknown {
  let found: unknown = CATALOG;
  for (const segment of key.split('.')) found = (found as Record<string, unknown> | undefined)?.[segment];
  return found;
}

/** Node-RED's i18n as the plugin's `_` applies it: the key's text, `__name__` filled in. */
const t: Translate = (key, values = {}) => {
  const text = lookUp(key);
  assert.equal(typeof text, 'string', `${key} is in the catalog`);
  return (text as string).replace(/__(\w+)__/g, (whole, name: string) => {
    assert.ok(name in values, `${key}: a value for __${name}__`);
    return String(values[name]);
  });
};

/** Markup as a person reads it: tags out, entities back. */
function textOf(html: string): string {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/\s+/g, ' ')
    .trim();
}

const NOW = Date.parse('2026-11-23T12:00:00Z');

function service(overrides: Partial<ServiceState> = {}): ServiceState {
  return {
    id: 'cfg1',
    name: 'built-in engine',
    kind: 'built-in',
    url: 'http://127.0.0.1:40123',
    sharing: 'off',
    error: null,
    operations: [
      {
        id: 'enhanceAudio',
        used: 0,
        limit: null,
        windowMs: 60_000,
        queued: 0,
        rateLimitedUntil: null,
        tooManyRequests: 0,
      },
      {
        id: 'uploadMedia',
        used: 10,
        limit: 10,
        windowMs: 60_000,
        queued: 2,
        rateLimitedUntil: NOW + 12_000,
        tooManyRequests: 1,
      },
      {
        id: 'getMetadata',
        used: 30,
        limit: 120,
        windowMs: 60_000,
        queued: 0,
        rateLimitedUntil: null,
        tooManyRequests: 0,
      },
    ],
    poller: { watching: 3, nextPollAt: NOW + 4_000 },
    ...overrides,
  };
}

function result(overrides: Partial<ResultRow> = {}): ResultRow {
  return {
    id: 'job-1',
    nodeId: 'n1',
    nodeName: 'upload',
    nodeType: 'media-enhance-upload',
    serviceId: 'cfg1',
    uid: '0123456789abcdef',
    fileName: 'talk.wav',
    outcome: 'done',
    errorCode: null,
    error: null,
    startedAt: NOW - 80_000,
    finishedAt: NOW,
    loudness: { input_lufs: -27.43, output_lufs: -16.02, target_lufs: -16, output_true_peak_dbtp: -1.2 },
    ...overrides,
  };
}

function loudnessReport(): LoudnessReport {
  const track = (level: number) => ({
    integrated_lufs: level,
    true_peak_dbtp: level + 12,
    loudness_range_lu: 4.2,
    duration_s: 20,
    short_term_lufs: Array.from({ length: 20 }, (_, i) => (i === 7 ? null : level + Math.sin(i))),
    true_peak_per_second_dbtp: Array.from({ length: 20 }, () => level + 12),
  });
  return {
    uid: '0123456789abcdef',
    interval_s: 1,
    target_lufs: -16,
    true_peak_limit_dbtp: -1,
    input: track(-27.4),
    output: track(-16),
  };
}

/** What the built-in engine writes into enhancement_params for a speech media (src/enhance/report.ts). */
function engineParams(noiseReducer: 'RNNoise' | 'DeepFilterNet3' = 'DeepFilterNet3'): Record<string, unknown> {
  return {
    loudness_target: -16,
    true_peak: -1,
    ...enhancementParams('LARK_V2', {
      stages: { denoise: true, highpass: true, leveler: true, humRemoval: true },
      noiseReducer,
      runtime: noiseReducer === 'RNNoise' ? 'wasm' : 'native',
      wet: noiseReducer === 'RNNoise' ? 0.8 : 1,
      attenuationCapDb: noiseReducer === 'RNNoise' ? null : 20,
      highPassHz: 80,
      hum: { mainsHz: 50, fundamentalHz: 50.02, harmonicsHz: [50.02, 100.04, 150.06], prominenceDb: 18.4 },
      noiseFloorReductionDb: 11.26,
      leveler: { targetDb: -20, minGainDb: -3.14, maxGainDb: 6.2, speechShare: 0.84 },
      threads: 1,
    }),
    processing: 'speech enhancement, loudness',
    input_loudness_lufs: -27.4,
    output_loudness_lufs: -16,
    gain_db: 9.1,
    limiter_reduction_db: 1.3,
    target_reached: true,
  };
}

describe('sidebar: what the tab shows', () => {
  it("shows per service what it is, each operation's use of its window, what waits, and the poller", () => {
    const html = renderServices(t, [service()], NOW);
    assert.equal(html.match(/class="me-service"/g)?.length, 1);
    assert.equal(html.match(/class="me-op-bar"/g)?.length, 3, 'one bar per operation');
    const text = textOf(html);
    for (const expected of [
      'built-in engine',
      'http://127.0.0.1:40123',
      'limits: this Node-RED only',
      'upload 10 / 10 per 1 min',
      '2 queued',
      `rate limited until ${new Date(NOW + 12_000).toTimeString().slice(0, 8)}`,
      '1 × 429 since start',
      'metadata 30 / 120 per 1 min',
      'enhance audio (v1) 0 per 1 min, no limit',
      'following 3 media, next poll in 4s',
    ])
      assert.ok(text.includes(expected), `"${expected}" in: ${text}`);
    // The bar is as full as the window: 25 % for 30 of 120, full and red while rate limited.
    assert.match(html, /data-operation="getMetadata"[\s\S]*?width: 25\.0%/);
    assert.match(html, /class="me-op me-op-limited" data-operation="uploadMedia"[\s\S]*?width: 100\.0%/);
    // Once the wait is over, the line goes.
    assert.ok(!textOf(renderServices(t, [service()], NOW + 13_000)).includes('rate limited'));
  });

  it('folds the counts of a service without any limit into one line, with no bar to fill', () => {
    const unlimited = service().operations.map((op, i) => ({
      ...op,
      limit: null,
      used: i + 1,
      rateLimitedUntil: null,
    }));
    const calm = unlimited.map((op) => ({ ...op, queued: 0, tooManyRequests: 0 }));
    const html = renderServices(t, [service({ operations: calm })], NOW);
    assert.match(html, /<details class="me-ops-unlimited"><summary/, 'folded, closed');
    assert.match(textOf(html), /no rate limits · 6 requests per 1 min/);
    // Nothing to share either: the sharing line goes, unless sharing was asked for.
    assert.doesNotMatch(textOf(html), /limits: this Node-RED only/);
    assert.match(
      textOf(renderServices(t, [service({ operations: calm, sharing: 'shared' })], NOW)),
      /limits: shared through Redis/,
    );
    // Something waiting still shows at once.
    assert.match(
      renderServices(t, [service({ operations: unlimited })], NOW),
      /<details class="me-ops-unlimited" open>/,
    );
    // One limit is enough for the bars to stay.
    assert.doesNotMatch(renderServices(t, [service()], NOW), /me-ops-unlimited/);
  });

  it('says why a service cannot be used, and that none is deployed', () => {
    const text = textOf(
      renderServices(t, [service({ kind: 'remote', url: null, error: 'no API key set', sharing: 'unreachable' })], NOW),
    );
    for (const expected of ['remote service', 'not started yet', 'no API key set', 'Redis unreachable'])
      assert.ok(text.includes(expected), `"${expected}" in: ${text}`);
    assert.match(textOf(renderServices(t, [], NOW)), /No media enhance service is deployed/);
  });

  it('shows a media in flight with its node, short uid, stage with its time, and elapsed time', () => {
    const html = renderInFlight(
      t,
      [
        {
          id: 'j1',
          nodeId: 'n1',
          nodeName: 'wait for completion',
          nodeType: 'media-enhance-wait',
          serviceId: 'cfg1',
          uid: '0123456789abcdef',
          stage: 'processing',
          stageSince: NOW - 80_000,
          startedAt: NOW - 123_000,
        },
        {
          id: 'j2',
          nodeId: 'n2',
          nodeName: 'upload',
          nodeType: 'media-enhance-upload',
          serviceId: 'cfg1',
          uid: null,
          stage: 'uploading 42%',
          stageSince: null,
          startedAt: NOW - 5_000,
        },
      ],
      NOW,
    );
    assert.equal(html.match(/class="me-inflight-row"/g)?.length, 2);
    assert.equal(textOf(html), 'wait for completion 01234567 processing 1m20s 2m03s upload – uploading 42% 5s');
    assert.match(textOf(renderInFlight(t, [], NOW)), /No media in flight/);
  });

  it('counts the jobs in flight the runtime did not list', () => {
    const row = {
      id: 'j1',
      nodeId: 'n1',
      nodeName: 'upload',
      nodeType: 'media-enhance-upload',
      serviceId: 'cfg1',
      uid: null,
      stage: 'queued',
      stageSince: null,
      startedAt: NOW,
    };
    const html = renderInFlight(t, [row], NOW, 1400);
    assert.equal(html.match(/class="me-inflight-row"/g)?.length, 1);
    assert.match(textOf(html), /and 1400 more in flight$/);
    assert.doesNotMatch(textOf(renderInFlight(t, [row], NOW, 0)), /more/);
  });

  it('lists the live streams: node, topic, model and format, latency, realtime factor and memory, the wait, a shared thread, resets', () => {
    const stream = {
      nodeId: 'n1',
      nodeName: 'enhance stream',
      topic: 'kitchen',
      rate: 16000,
      channels: 1,
      encoding: 's16le',
      model: 'FINCH',
      latencyMs: 24,
      realtimeFactor: 0.0412,
      waitMs: 0,
      memoryBytes: 190_464,
      threadStreams: 1,
      resets: 0,
      chunks: 10,
      since: NOW - 80_000,
    };
    const waiting = { ...stream, topic: '', waitMs: 340, latencyMs: null, threadStreams: 3, resets: 2 };
    const html = renderStreams(t, [stream, waiting], NOW);
    assert.equal(html.match(/class="me-stream-row"/g)?.length, 2);
    assert.equal(
      textOf(html),
      'enhance stream kitchen FINCH · 16 kHz, 1 ch, s16le 24 ms latency · 0.04x realtime · 186.0 KiB 1m20s ' +
        'enhance stream default stream FINCH · 16 kHz, 1 ch, s16le – ms latency · 0.04x realtime · 186.0 KiB ' +
        '3 streams on its thread chunks wait 340 ms state started afresh 2x (its output turned non-finite) 1m20s',
    );
    assert.match(textOf(renderStreams(t, [], NOW)), /No live stream open/);
  });

  it('lists results newest first as given, a failed one with its error code and sentence', () => {
    const html = renderResults(t, [
      result(),
      result({
        id: 'job-2',
        outcome: 'failed',
        errorCode: 'JOB_FAILED',
        error: 'the file holds no audio',
        loudness: null,
      }),
    ]);
    const rows = html.split(/(?=<div class="me-result-row)/).map(textOf);
    assert.equal(rows.length, 2);
    assert.match(rows[0], /^done talk\.wav \d\d:\d\d:\d\d upload 01234567 -27\.4 → -16\.0 LUFS$/);
    assert.match(rows[1], /^failed talk\.wav \d\d:\d\d:\d\d upload 01234567 JOB_FAILED: the file holds no audio$/);
    // A message that brought no file and failed before any media: the row says so, not a dash.
    const bare = textOf(renderResults(t, [result({ outcome: 'failed', fileName: null, uid: null, error: 'no file' })]));
    assert.match(bare, /^failed message without a file /);
  });

  it('plays the original and the enhanced file through the play route, one shown at a time, with an A/B switch', () => {
    const done: ResultDetails = { result: result(), metadata: null, loudness: null, loudnessOffered: false };
    // Each file with its own ticket, as the tab gives them.
    const html = renderDetail(
      t,
      done,
      { width: 300, height: 165 },
      (uid, step) => `admin/${playUrl(uid, step)}&ticket=${step.toLowerCase()}`,
    );
    const players = [...html.matchAll(/<audio ([^>]*)>/g)].map((m) => m[1]);
    assert.deepEqual(players, [
      'class="me-audio me-play-original" data-step="PRE" controls preload="none" src="admin/media-enhance/media/0123456789abcdef/play?step=PRE&#38;ticket=pre" hidden',
      'class="me-audio me-play-enhanced" data-step="ENHANCED" controls preload="none" src="admin/media-enhance/media/0123456789abcdef/play?step=ENHANCED&#38;ticket=enhanced"',
    ]);
    assert.deepEqual(playedSteps(done.result), ['PRE', 'ENHANCED']);
    assert.match(textOf(html), /Listen A: original B: enhanced/);
    const failed = renderDetail(t, { ...done, result: result({ outcome: 'failed' }) }, { width: 300, height: 165 });
    assert.equal(failed.match(/<audio /g)?.length, 1, 'a failed media has its original only');
    assert.doesNotMatch(failed, /me-ab-choice/);
  });

  it("shows the built-in engine's disk use, its retention rule in words, and the removal button", () => {
    const rule = { maxAgeMs: 7 * 86_400_000, maxTotalBytes: 5 * 1024 ** 3, graceMs: 3_600_000 };
    const use = { media: 12, finished: 9, bytes: 1_610_612_736, oldest: new Date(NOW - 3 * 86_400_000).toISOString() };
    const html = renderStorage(
      t,
      { services: [{ serviceId: 'cfg1', name: 'built-in engine', use, error: null, retention: rule }] },
      NOW,
    );
    const text = textOf(html);
    assert.match(text, /12 media kept \(9 finished\), 1\.5 GiB/);
    assert.match(text, /oldest from 2026-11-20 \d\d:00:00, 72h00m ago/);
    assert.match(
      text,
      /Finished media are removed 7 days after their last use, or sooner, oldest first, while all take more than 5\.0 GiB; none used within the last 1 h\./,
    );
    assert.match(html, /data-bytes="1610612736"/);
    // The period's words are the catalog's, as every other word of the translated sidebar.
    const marked: Translate = (key, values) =>
      key.startsWith('sidebar.storage.period') ? `[${key} ${values?.count}]` : t(key, values);
    const periods = (ruleOf: typeof rule) =>
      textOf(
        renderStorage(
          marked,
          { services: [{ serviceId: 'cfg1', name: 'e', use, error: null, retention: ruleOf }] },
          NOW,
        ),
      );
    assert.match(
      periods(rule),
      /removed \[sidebar\.storage\.periodDays 7\] after .* \[sidebar\.storage\.periodHours 1\]\./,
    );
    assert.match(
      periods({ ...rule, maxAgeMs: 86_400_000, graceMs: 30 * 60_000 }),
      /removed \[sidebar\.storage\.periodDay 1\] after .* \[sidebar\.storage\.periodMinutes 30\]\./,
    );
    assert.doesNotMatch(html, /me-storage-remove"[^>]*disabled/);
    const empty = renderStorage(
      t,
      {
        services: [
          {
            serviceId: 'cfg1',
            name: 'e',
            use: { ...use, media: 0, finished: 0, bytes: 0, oldest: null },
            error: null,
            retention: { ...rule, maxAgeMs: null, maxTotalBytes: null },
          },
        ],
      },
      NOW,
    );
    assert.match(empty, /me-storage-remove" disabled/, 'nothing to remove: the button is off');
    assert.match(textOf(empty), /Finished media are kept until removed here\./);
    assert.match(textOf(renderStorage(t, { services: [] }, NOW)), /No built-in engine is deployed/);
  });

  it("says RNNoise's noise reduction as its share of the denoised signal", () => {
    const detail: ResultDetails = {
      result: result(),
      metadata: {
        uid: '0123456789abcdef',
        enhancement_status: 'COMPLETED',
        enhancement_params: engineParams('RNNoise'),
      },
      loudness: loudnessReport(),
      loudnessOffered: true,
    };
    const text = textOf(renderDetail(t, detail, { width: 300, height: 165 }));
    assert.ok(
      text.includes(
        'noise reduction: RNNoise on WebAssembly, 80% of the denoised signal, noise floor lowered by 11.3 dB',
      ),
      text,
    );
  });

  it('opens a detail view with the stages, the figures, the chart and both downloads', () => {
    const detail: ResultDetails = {
      result: result(),
      metadata: { uid: '0123456789abcdef', enhancement_status: 'COMPLETED', enhancement_params: engineParams() },
      loudness: loudnessReport(),
      loudnessOffered: true,
    };
    const html = renderDetail(t, detail, { width: 300, height: 165 });
    const text = textOf(html);
    for (const expected of [
      'model: LARK_V2',
      'high-pass filter at 80 Hz',
      'hum removal: 50 Hz mains, harmonics subtracted at 50, 100, 150 Hz',
      'noise reduction: DeepFilterNet3 on the native ONNX runtime, attenuation limited to 20.0 dB, noise floor lowered by 11.3 dB',
      'speech leveler: gain -3.1 to +6.2 dB, speech in 84% of the file',
      'loudness: gain +9.1 dB, true-peak limiter up to 1.3 dB',
      'integrated -27.4 LUFS -16.0 LUFS',
      'true peak -15.4 dBTP -4.0 dBTP',
      'loudness range 4.2 LU 4.2 LU',
      'target -16.0 LUFS, true-peak ceiling -1.0 dBTP',
    ])
      assert.ok(text.includes(expected), `"${expected}" in: ${text}`);
    assert.match(html, /<svg class="me-loudness-chart"/);
    assert.match(html, /<path class="me-curve me-curve-input" d="M/);
    assert.match(html, /<path class="me-curve me-curve-output" d="M/);
    assert.match(html, /<line class="me-target-line"/);
    assert.match(html, /<line class="me-peak-line"/);
    assert.match(
      html,
      /<a class="me-download-original" href="media-enhance\/media\/0123456789abcdef\/file\?step=PRE" download>/,
    );
    assert.match(
      html,
      /<a class="me-download-enhanced" href="media-enhance\/media\/0123456789abcdef\/file\?step=ENHANCED" download>/,
    );
  });

  it('shows the numbers without a chart, and says why, when the service offers no loudness report', () => {
    const params = engineParams();
    const html = renderDetail(
      t,
      {
        result: result(),
        metadata: {
          uid: '0123456789abcdef',
          enhancement_status: 'COMPLETED',
          enhancement_params: { ...params, input_true_peak_dbtp: -9.5 },
        },
        loudness: null,
        loudnessOffered: false,
      },
      { width: 300, height: 165 },
    );
    assert.doesNotMatch(html, /<svg/);
    const text = textOf(html);
    assert.match(text, /No loudness chart: the service offers no loudness report for this media/);
    assert.match(text, /integrated -27\.4 LUFS -16\.0 LUFS/);
    assert.match(text, /true peak -9\.5 dBTP/);
    // A failed media has no enhanced file to download, and no figures.
    const failed = renderDetail(
      t,
      {
        result: result({ outcome: 'failed', errorCode: 'JOB_FAILED', error: 'decode failed' }),
        metadata: null,
        loudness: null,
        loudnessOffered: false,
      },
      { width: 300, height: 165 },
    );
    assert.match(failed, /me-download-original/);
    assert.doesNotMatch(failed, /me-download-enhanced|No loudness chart/);
    assert.match(textOf(failed), /JOB_FAILED: decode failed/);
  });

  it('explains every figure in its help section', () => {
    const text = textOf(renderHelp(t));
    for (const term of [
      'Operation bars',
      'rate limited until',
      '× 429',
      'Integrated loudness (LUFS)',
      'True peak (dBTP)',
      'Loudness range (LU)',
      'Chart',
      'Listen (A/B)',
      'Storage',
    ])
      assert.ok(text.includes(term), term);
  });
});

describe('sidebar: catalog and browser script', () => {
  /** Every 'sidebar.…' key the tab's code and the plugin's .html name. */
  function usedKeys(): Set<string> {
    // The built script holds every module of the tab as compiled (string literals as written); the
    // sources are not there when the suite runs from a copy of the built package (the Node-RED 5 run).
    const files = [join(ROOT, 'resources', SIDEBAR_SCRIPT_FILE), join(ROOT, 'plugins', 'media-enhance-sidebar.html')];
    return new Set(
      files.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/'(sidebar\.[A-Za-z.]+)'/g)].map((m) => m[1])),
    );
  }

  it('holds every key the tab uses, and uses every key it holds', () => {
    const inCatalog: string[] = [];
    const walk = (prefix: string, value: unknown): void => {
      if (typeof value === 'string') inCatalog.push(prefix);
      else
        for (const [name, inner] of Object.entries(value as object)) walk(prefix ? `${prefix}.${name}` : name, inner);
    };
    walk('', CATALOG);
    const used = usedKeys();
    assert.deepEqual(
      [...used].filter((key) => typeof lookUp(key) !== 'string'),
      [],
      'used but not in the catalog',
    );
    assert.deepEqual(
      inCatalog.filter((key) => !used.has(key)),
      [],
      'in the catalog but never used',
    );
  });

  it('runs on its own in a page and draws the same chart as the code the tests call', () => {
    const script = readFileSync(join(ROOT, 'resources', SIDEBAR_SCRIPT_FILE), 'utf8');
    const page = createContext({});
    runInContext(script, page);
    const bundled = (page as { MediaEnhanceSidebar?: Record<string, unknown> }).MediaEnhanceSidebar;
    assert.equal(typeof bundled?.createTab, 'function');
    const chart = (bundled!.loudnessChart as typeof loudnessChart)(loudnessReport(), { width: 300, height: 165 });
    assert.deepEqual(
      JSON.parse(JSON.stringify(chart)),
      JSON.parse(JSON.stringify(loudnessChart(loudnessReport(), { width: 300, height: 165 }))),
    );
    assert.doesNotMatch(script, /require\("(?!\.)/, 'no import the browser lacks');
  });

  it("is loaded by the plugin's .html from the package's resources, by a relative src", () => {
    const html = readFileSync(join(ROOT, 'plugins', 'media-enhance-sidebar.html'), 'utf8');
    const name = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string }).name;
    assert.ok(html.includes(`<script src="resources/${name}/${SIDEBAR_SCRIPT_FILE}"></script>`));
    assert.match(html, /RED\.plugins\.registerPlugin\('media-enhance-sidebar'/);
    assert.match(html, /RED\.sidebar\.addTab\(\{\s*id: 'media-enhance'/);
  });
});
