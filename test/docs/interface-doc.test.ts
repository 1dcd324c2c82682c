// docs/interface.md is the interface as the package implements it. These checks keep it honest: every
// place the source cites in it exists, and its tables say what the code does, so neither can drift
// from the other without a test failing.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join, relative } from 'node:path';
import { request } from 'undici';
import { resolveOptions } from '../../src/client/options';
import { DEFAULT_RATE_LIMITS, ENDPOINT_IDS, MEDIA_STATES, PATHS, type EndpointId } from '../../src/contract/endpoints';
import {
  LOUDNESS_TARGET,
  MODELS,
  SETTINGS_MODELS,
  SETTINGS_DEFAULTS,
  STEPS,
  TRANSCODE_KINDS,
  TRUE_PEAK,
  URL_LENGTH,
  V1_ENHANCEMENT_LEVEL,
  V2_ENHANCEMENT_LEVEL,
  checkEnhanceJsonBody,
  checkEnhancementSettings,
  checkMediaUid,
} from '../../src/contract/fields';
import {
  LOUDNESS_REPORT_ANSWERS,
  LOUDNESS_REPORT_PATH,
  LOUDNESS_REPORT_REFUSED,
} from '../../src/contract/loudness-report';
import {
  BITRATE_KBPS,
  BITRATE_MODES,
  DEREVERB_STRENGTH,
  EXTENSION_OF,
  isEncodingMember,
  SAMPLE_RATES_HZ,
  TRIM_PAUSES_S,
} from '../../src/contract/extensions';
import { METADATA_WAIT_HEADER, METADATA_WAIT_PARAM } from '../../src/contract/metadata-wait';
import { METADATA_WAIT_S as LOCAL_ENGINE_METADATA_WAIT_S } from '../../src/nodes/local-engine';
import { DEFAULT_SERVER_LIMITS } from '../../src/engine/http/server-limits';
import { resolveEngineOptions } from '../../src/engine/options';
import { KEY, startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { headingAnchors } from './heading-anchors';

const ROOT = join(__dirname, '..', '..', '..');
const DOC = 'docs/interface.md';
/** Where comments may cite the document. */
const SOURCE_FOLDERS = ['src', 'test', 'bench', 'scripts', 'nodes'];

interface Section {
  heading: string;
  body: string;
}

/** The document's sections, by heading (any level). */
function sections(markdown: string): Section[] {
  const found: Section[] = [];
  for (const line of markdown.split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) found.push({ heading: heading[1].trim(), body: '' });
    else if (found.length > 0) found[found.length - 1].body += `${line}\n`;
  }
  return found;
}

/** The anchors of the page's headings. */
function anchors(markdown: string): Set<string> {
  return headingAnchors(sections(markdown).map(({ heading }) => heading));
}

/** The first table under a heading, as rows of cells keyed by the table's header. */
function table(markdown: string, heading: string): Record<string, string>[] {
  const section = sections(markdown).find((s) => s.heading === heading);
  assert.ok(section, `${DOC} has a section "${heading}"`);
  const lines = section.body.split('\n').filter((line) => line.startsWith('|'));
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim());
  assert.ok(lines.length > 2, `the section "${heading}" has a table`);
  const header = cells(lines[0]);
  return lines.slice(2).map((line) => Object.fromEntries(cells(line).map((cell, i) => [header[i], cell])));
}

/** The first name in backticks: `` `loudness_target` `` -> loudness_target. */
function code(cell: string): string {
  return /`([^`]+)`/.exec(cell)?.[1] ?? cell;
}

/** Every name in backticks: `` `MP3`, `WAV` `` -> [MP3, WAV]. */
function codes(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

/** `-70 to -5`, `1 to 2083 characters` -> {min, max}; undefined when the cell states no range. */
function range(cell: string): { min: number; max: number } | undefined {
  const match = /^(-?\d+(?:\.\d+)?) to (-?\d+(?:\.\d+)?)\b/.exec(cell);
  return match ? { min: Number(match[1]), max: Number(match[2]) } : undefined;
}

const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  min: 60_000,
  h: 3_600_000,
  days: 86_400_000,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  dB: 1,
};

/** The amount a cell starts with, in ms or bytes: `60 s` -> 60000, `2 GiB`, `100`, `none` -> 0. */
function amount(cell: string): number {
  if (/^none\b/.test(cell)) return 0;
  const match = /^(-?\d+(?:\.\d+)?)(?:\s*(ms|s|min|h|days|KiB|MiB|GiB|dB)\b)?/.exec(cell);
  assert.ok(match, `"${cell}" starts with an amount`);
  return Number(match[1]) * (match[2] ? UNITS[match[2]] : 1);
}

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await fsp.readdir(folder, { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(folder, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'icons')
      files.push(...(await sourceFiles(path)));
    else if (/\.(ts|js|mjs|html)$/.test(entry.name)) files.push(path);
  }
  return files;
}

describe('docs/interface.md', function () {
  let doc: string;

  before(async () => {
    doc = await fsp.readFile(join(ROOT, DOC), 'utf8');
  });

  it('has a heading for every place a source comment cites in it', async () => {
    const known = anchors(doc);
    const cited: string[] = [];
    const missing: string[] = [];
    for (const folder of SOURCE_FOLDERS) {
      for (const file of await sourceFiles(join(ROOT, folder))) {
        const text = await fsp.readFile(file, 'utf8');
        for (const match of text.matchAll(/docs\/interface\.md#([\w-]+)/g)) {
          cited.push(match[1]);
          if (!known.has(match[1])) missing.push(`${relative(ROOT, file)}: #${match[1]}`);
        }
      }
    }
    assert.ok(cited.length >= 5, `the contract's comments cite ${DOC} (found ${cited.length} citations)`);
    assert.deepEqual(missing, [], `cited but not a heading of ${DOC}`);
  });

  it('links only to its own headings', () => {
    const known = anchors(doc);
    const links = [...doc.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]);
    assert.ok(links.length > 0);
    assert.deepEqual(
      links.filter((link) => !known.has(link)),
      [],
    );
  });

  it('states the bounds, values and defaults of every field as src/contract does', () => {
    const rows = table(doc, 'Fields and bounds');
    const bounds: Record<string, { min: number; max: number }> = {
      'enhance-json file_download_url': URL_LENGTH,
      'enhance-json loudness_target_level': LOUDNESS_TARGET,
      'enhance-json loudness_peak_limit': TRUE_PEAK,
      'enhance-json enhancement_level': V1_ENHANCEMENT_LEVEL,
      'settings loudness_target': LOUDNESS_TARGET,
      'settings true_peak': TRUE_PEAK,
      'settings enhancement_level': V2_ENHANCEMENT_LEVEL,
    };
    const values: Record<string, readonly string[]> = {
      transcode_kind: TRANSCODE_KINDS,
      transcode: TRANSCODE_KINDS,
      model_arch: MODELS,
      enhancement_model: SETTINGS_MODELS,
      step: STEPS,
    };
    const rowsWithBounds: string[] = [];
    for (const row of rows) {
      const field = code(row.field);
      const where = row.where.split(' ')[0];
      const stated = range(row['bounds or values']);
      if (stated) rowsWithBounds.push(`${where} ${field}`);
      if (field === 'media_uid') {
        // The contract holds this bound in its check alone: the check must take both ends and refuse beyond.
        assert.ok(stated, 'media_uid has a length range');
        assert.deepEqual(checkMediaUid('u'.repeat(stated.max)), []);
        assert.deepEqual(checkMediaUid('u'.repeat(stated.min)), []);
        assert.equal(checkMediaUid('u'.repeat(stated.max + 1)).length, 1);
        assert.equal(checkMediaUid('u'.repeat(stated.min - 1)).length, 1);
      } else if (stated) {
        assert.deepEqual(stated, { ...bounds[`${where} ${field}`] }, `bounds of ${where} ${field}`);
      }
      if (values[field]) assert.deepEqual(codes(row['bounds or values']), [...values[field]], `values of ${field}`);
      if (where === 'settings') {
        const defaults = SETTINGS_DEFAULTS as Record<string, unknown>;
        if (field in defaults) assert.equal(code(row.default), String(defaults[field]), `default of ${field}`);
        else assert.match(row.default, /^none/, `${field} has no default in src/contract`);
      }
    }
    assert.deepEqual(rowsWithBounds.filter((r) => !r.endsWith('media_uid')).sort(), Object.keys(bounds).sort());
  });

  it('lists exactly the fields the contract requires of enhance-json and takes in the settings parts', () => {
    const rows = table(doc, 'Fields and bounds');
    const listed = (where: string) => rows.filter((r) => r.where.startsWith(where)).map((r) => code(r.field));
    const required = checkEnhanceJsonBody({})
      .filter((issue) => issue.type === 'value_error.missing')
      .map((issue) => issue.loc[1]);
    assert.deepEqual(listed('enhance-json').sort(), [...required].sort());
    for (const member of listed('settings')) {
      const issues = checkEnhancementSettings({ [member]: null }, 'media_enhancement');
      assert.ok(!issues.some((i) => i.type === 'value_error.extra'), `${member} is a member of media_enhancement`);
    }
    assert.deepEqual(
      Object.keys(SETTINGS_DEFAULTS).filter((member) => !listed('settings').includes(member)),
      [],
    );
  });

  it('lists the encoding choices of the output-encoding extension with the bounds of src/contract', () => {
    const rows = table(doc, 'Encoding choices');
    assert.deepEqual(rows.map((r) => code(r.member)).sort(), [...EXTENSION_OF.keys()].filter(isEncodingMember).sort());
    const cell = (member: string) => rows.find((r) => code(r.member) === member)!['bounds or values'];
    assert.deepEqual(range(cell('bitrate_kbps')), { ...BITRATE_KBPS });
    assert.deepEqual(codes(cell('bitrate_mode')), [...BITRATE_MODES]);
    assert.deepEqual(codes(cell('sample_rate_hz')).map(Number), [...SAMPLE_RATES_HZ]);
    assert.deepEqual(codes(cell('downmix_mono')), ['true', 'false']);
    for (const member of EXTENSION_OF.keys()) {
      const issues = checkEnhancementSettings({ transcode: 'MP3', [member]: null }, 'media_enhancement');
      assert.ok(!issues.some((i) => i.type === 'value_error.extra'), `${member} is a member of media_enhancement`);
    }
  });

  it('gives the bounds of trim_pauses_s of src/contract', () => {
    const section = doc.slice(doc.indexOf('### Pauses trimmed'), doc.indexOf('### Loudness report'));
    assert.ok(section.includes('`trim_pauses_s`'), 'the section names the member');
    assert.ok(
      section.includes(`(a number of seconds, ${TRIM_PAUSES_S.min} to ${TRIM_PAUSES_S.max};`),
      'the bounds of src/contract',
    );
  });

  it('gives the bounds of dereverb of src/contract', () => {
    const section = doc.slice(doc.indexOf('### Room echo reduced'), doc.indexOf('### Several outputs'));
    assert.ok(section.includes('`dereverb` in `media_enhancement`'), 'the section names the member');
    assert.ok(
      section.includes(`(a whole number, ${DEREVERB_STRENGTH.min} to ${DEREVERB_STRENGTH.max};`),
      'the bounds of src/contract',
    );
  });

  it('gives the rate limits and paths of src/contract', () => {
    const rows = table(doc, 'Rate limits');
    assert.deepEqual(rows.map((r) => code(r.operation)).sort(), [...ENDPOINT_IDS].sort());
    const paths: Record<EndpointId, string> = {
      enhanceAudio: PATHS.enhanceAudio,
      enhanceVideo: PATHS.enhanceVideo,
      uploadMedia: PATHS.uploadMedia,
      getMetadata: decodeURIComponent(PATHS.metadata('{media_uid}')),
      downloadFile: decodeURIComponent(PATHS.file('{media_uid}')),
    };
    for (const row of rows) {
      const endpoint = code(row.operation) as EndpointId;
      const limit = row['requests per window'];
      assert.equal(limit === 'none' ? null : Number(limit), DEFAULT_RATE_LIMITS[endpoint], `limit of ${endpoint}`);
      assert.equal(code(row['method and path']).split(' ')[1], paths[endpoint], `path of ${endpoint}`);
    }
  });

  it('names the media states of src/contract, in order', () => {
    assert.deepEqual(
      table(doc, 'Media states').map((r) => code(r.state)),
      [...MEDIA_STATES],
    );
  });

  it("gives the client's defaults", () => {
    const resolved = resolveOptions({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
    const rows = table(doc, 'Client options');
    const stated = (option: string) => rows.find((r) => code(r.option) === option)?.default ?? '';
    assert.equal(amount(stated('windowMs')), resolved.windowMs);
    assert.equal(amount(stated('requestTimeoutMs')), resolved.requestTimeoutMs);
    assert.equal(amount(stated('maxConnections')), resolved.maxConnections);
    for (const [name, value] of Object.entries(resolved.retry))
      assert.equal(amount(stated(`retry.${name}`)), value, `retry.${name}`);
    const poll = table(doc, 'Polling');
    const pollStated = (option: string) => poll.find((r) => code(r['option (`poll`)']) === option)?.default ?? '';
    const asRange = (cell: string) => Object.values(range(cell) ?? {});
    assert.deepEqual(asRange(pollStated('initialMs')), resolved.poll.initialMs);
    assert.deepEqual(asRange(pollStated('longMs')), resolved.poll.longMs);
    assert.equal(amount(pollStated('longAfterMs')), resolved.poll.longAfterMs);
  });

  it("gives the engine's defaults: its options, its server limits and its retention", () => {
    const resolved = resolveEngineOptions({ apiKeys: ['k'], dataDir: 'unused' }) as unknown as Record<string, unknown>;
    const options = table(doc, 'Engine options');
    for (const row of options) assert.ok(code(row.option) in resolved, `${code(row.option)} is an engine option`);
    for (const name of ['port', 'windowMs', 'maxUploadBytes', 'processingDelayMs', 'fetchTimeoutMs', 'maxLimitingDb']) {
      const row = options.find((r) => code(r.option) === name);
      assert.ok(row, `${name} is listed`);
      assert.equal(amount(row.default), resolved[name], name);
    }

    const server = table(doc, 'Server limits');
    assert.deepEqual(server.map((r) => code(r.option)).sort(), Object.keys(DEFAULT_SERVER_LIMITS).sort());
    for (const row of server)
      assert.equal(amount(row.default), DEFAULT_SERVER_LIMITS[code(row.option) as keyof typeof DEFAULT_SERVER_LIMITS]);

    const retention = resolved.retention as Record<string, number | null>;
    const kept = table(doc, 'Storage and retention');
    assert.deepEqual(kept.map((r) => code(r['option (`retention`)'])).sort(), Object.keys(retention).sort());
    for (const row of kept) {
      const name = code(row['option (`retention`)']);
      assert.equal(amount(row.default), retention[name], `retention.${name}`);
    }
  });

  it("gives the loudness report's path and each answer's status and X-Loudness-Report of src/contract", () => {
    const section = sections(doc).find((s) => s.heading === 'Loudness report');
    assert.ok(section, 'a section "Loudness report"');
    assert.ok(section.body.includes(`\`GET ${decodeURIComponent(LOUDNESS_REPORT_PATH('{media_uid}'))}\``), 'its path');
    const rows = table(doc, 'Loudness report').filter(
      (row) => code(row['X-Loudness-Report']) !== LOUDNESS_REPORT_REFUSED,
    );
    assert.deepEqual(
      Object.fromEntries(rows.map((row) => [code(row['X-Loudness-Report']), Number(code(row.status))])),
      LOUDNESS_REPORT_ANSWERS,
    );
  });

  it("gives the waiting-metadata extension's query, header and longest wait as src/contract and the config node's engine use them", async () => {
    const section = sections(doc).find((s) => s.heading === 'Waiting metadata');
    assert.ok(section, 'a section "Waiting metadata"');
    assert.ok(
      section.body.includes(`\`GET ${decodeURIComponent(PATHS.metadata('{media_uid}'))}?${METADATA_WAIT_PARAM}=<s>\``),
      'its path',
    );
    const header = /`(X-[A-Za-z-]+): <longest wait/.exec(section.body)?.[1];
    assert.equal(header?.toLowerCase(), METADATA_WAIT_HEADER);
    const stated = Number(/engine of a config node: (\d+) s/.exec(section.body)?.[1]);
    assert.equal(stated, LOCAL_ENGINE_METADATA_WAIT_S, "the config node's engine");
    const engine = await startTestEngine({ metadataWaitS: stated });
    try {
      const res = await request(`${engine.url}${PATHS.metadata('0f3c2a5e-0000-4000-8000-000000000000')}`, {
        headers: { 'x-api-key': KEY },
      });
      await res.body.dump();
      assert.equal(res.headers[METADATA_WAIT_HEADER], String(stated), 'declared on a 404 status answer too');
    } finally {
      await engine.dispose();
    }
  });

  it('marks every refusal of the loudness route as its table says, and counts none its text says it does not', async () => {
    const refusedRow = table(doc, 'Loudness report').find(
      (row) => code(row['X-Loudness-Report']) === LOUDNESS_REPORT_REFUSED,
    );
    assert.ok(refusedRow, `a row marked \`${LOUDNESS_REPORT_REFUSED}\``);
    const marked = codes(refusedRow.status).map(Number);
    const section = sections(doc).find((s) => s.heading === 'Loudness report')!;
    const notCounted = /a request it refuses\s+\(([^)]*)\)\s+does not count/.exec(section.body.replace(/\n/g, ' '));
    assert.ok(notCounted, 'the section says which refusals do not count');
    const uncounted = codes(notCounted[1]).map(Number);
    const engines = await Promise.all([
      startTestEngine({ limits: { getMetadata: 20 } }),
      startTestEngine({ faults: { error500Rate: 1 } }),
      startTestEngine({ faults: { error503Rate: 1 } }),
    ]);
    const [engine, failing, unavailable] = engines;
    try {
      const loudness = (
        on: TestEngine,
        uid: string,
        init: { method?: string; headers?: Record<string, string> } = {},
      ) =>
        request(`${on.url}${LOUDNESS_REPORT_PATH(uid)}`, {
          method: (init.method ?? 'GET') as 'GET',
          headers: init.headers ?? { 'x-api-key': KEY },
        });
      const manyHeaders = Object.fromEntries(
        Array.from({ length: DEFAULT_SERVER_LIMITS.maxHeaderCount + 1 }, (_, i) => [`x-filler-${i}`, '1']),
      );
      /** How to make the route answer each status the doc may list, on the limited engine unless it says. */
      const provoke: Record<number, () => ReturnType<typeof loudness>> = {
        401: () => loudness(engine, 'some-media', { headers: {} }),
        404: () => loudness(engine, 'no-such-media'),
        405: () => loudness(engine, 'some-media', { method: 'POST' }),
        422: () => loudness(engine, 'u'.repeat(201)),
        429: async () => {
          for (;;) {
            const answer = await loudness(engine, 'no-such-media');
            await answer.body.dump();
            if (answer.statusCode === 429) return answer;
            // The unknown media gave its place back: fill the window through the metadata route.
            await (
              await request(`${engine.url}${PATHS.metadata('no-such-media')}`, { headers: { 'x-api-key': KEY } })
            ).body.dump();
          }
        },
        431: () => loudness(engine, 'some-media', { headers: { 'x-api-key': KEY, ...manyHeaders } }),
        500: () => loudness(failing, 'some-media'),
        503: () => loudness(unavailable, 'some-media'),
      };
      const used = async () => {
        const answer = await request(`${engine.url}${PATHS.metadata('no-such-media')}`, {
          headers: { 'x-api-key': KEY },
        });
        await answer.body.dump();
        return Number(answer.headers['x-ratelimit-used']);
      };
      // Counted or not is read on the limited engine's window; a 429 never counts (the window is full), and
      // the engines that fail every request on purpose (500, 503) answer no count to read.
      for (const status of uncounted) {
        if (status === 429 || status === 503) continue;
        assert.ok(provoke[status], `the test knows how to make the route answer ${status}`);
        const before = await used();
        const answer = await provoke[status]();
        await answer.body.dump();
        assert.equal(answer.statusCode, status);
        assert.equal(
          await used(),
          before + 1,
          `a ${status} of the loudness route is not counted (only the metadata read is)`,
        );
      }
      // Past the limit last: the window stays full.
      for (const status of [...marked].sort((a, b) => Number(a === 429) - Number(b === 429))) {
        assert.ok(provoke[status], `the test knows how to make the route answer ${status}`);
        const answer = await provoke[status]();
        await answer.body.dump();
        assert.equal(answer.statusCode, status);
        assert.equal(answer.headers['x-loudness-report'], LOUDNESS_REPORT_REFUSED, `a ${status} is marked`);
      }
    } finally {
      await Promise.all(engines.map((e) => e.dispose()));
    }
  });
});
