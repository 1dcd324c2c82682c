// The nodes' texts and their message catalogs agree: every key the nodes look up (a string literal
// 'media-enhance….…' in the built nodes) is in nodes/locales/en-US with the placeholders the code fills,
// and every status, log and error text of a catalog is used. Node-RED's own i18n finds a translation in
// a new JSON file alone, and falls back to English for what it leaves out.
import assert from 'node:assert/strict';
import { promises as fsp, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { catalogOf, english, englishCatalog, translator } from '../../src/nodes/texts';

const ROOT = join(__dirname, '..', '..', '..');
/** The built nodes: the Node-RED 5 run copies dist/ and nodes/ but not src/. */
const BUILT_NODES = join(ROOT, 'dist', 'src', 'nodes');
const KEY = /^media-enhance(-[a-z]+)?\.[A-Za-z]+(\.[A-Za-z]+)+$/;
/** The sections of a node's catalog that hold the nodes' texts (`setting`: labels as errors name them); the rest is the editor's. */
const TEXT_SECTIONS = ['status', 'log', 'error', 'setting'];

interface Use {
  key: string;
  file: string;
  /** The placeholders the code fills: the names of the values object of a `t(key, { … })` call. */
  values: string[];
}

function usesIn(file: string): Use[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const uses: Use[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) && KEY.test(node.text)) {
      const call = node.parent;
      let values: string[] = [];
      if (ts.isCallExpression(call) && call.arguments[0] === node && call.arguments.length > 1) {
        const given = call.arguments[1];
        assert.ok(ts.isObjectLiteralExpression(given), `${file}: the values of '${node.text}' are an object literal`);
        values = given.properties.map((p) => (p.name && ts.isIdentifier(p.name) ? p.name.text : '?'));
      }
      uses.push({ key: node.text, file, values });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}

function placeholders(text: string): string[] {
  return [...text.matchAll(/__(\w+)__/g)].map((m) => m[1]).sort();
}

function lookUp(key: string): unknown {
  let found: unknown = englishCatalog(catalogOf(key));
  for (const segment of key.split('.')) found = (found as Record<string, unknown> | undefined)?.[segment];
  return found;
}

/** Every text key of the catalogs: all of `media-enhance.…` and each node's status, log and error sections. */
function catalogKeys(): string[] {
  const keys: string[] = [];
  const walk = (prefix: string, value: unknown): void => {
    if (typeof value === 'string') keys.push(prefix);
    else for (const [name, inner] of Object.entries(value as object)) walk(`${prefix}.${name}`, inner);
  };
  for (const file of readdirSync(join(ROOT, 'nodes', 'locales', 'en-US')).filter((f) => f.endsWith('.json'))) {
    const catalog = englishCatalog(file.replace(/\.json$/, '')) as Record<string, Record<string, unknown>>;
    for (const [top, sections] of Object.entries(catalog)) {
      if (top === 'media-enhance') walk(top, sections);
      else for (const section of TEXT_SECTIONS) if (section in sections) walk(`${top}.${section}`, sections[section]);
    }
  }
  return keys;
}

describe('nodes: texts and their message catalogs', () => {
  const uses = readdirSync(BUILT_NODES)
    .filter((f) => f.endsWith('.js'))
    .flatMap((f) => usesIn(join(BUILT_NODES, f)));

  it('every key the nodes use is in the en-US catalog, with the placeholders the code fills', () => {
    assert.ok(uses.length > 40, `found ${uses.length} keys`);
    for (const { key, file, values } of uses) {
      const text = lookUp(key);
      assert.equal(typeof text, 'string', `${key} (${file}) is in nodes/locales/en-US/${catalogOf(key)}.json`);
      assert.deepEqual([...values].sort(), placeholders(text as string), `${key} (${file}): placeholders`);
    }
  });

  it('every status, log and error text of the catalogs is used', () => {
    const used = new Set(uses.map((u) => u.key));
    assert.deepEqual(
      catalogKeys().filter((key) => !used.has(key)),
      [],
    );
  });

  it('every help text that refers to the README or the docs links to it', () => {
    const folder = join(ROOT, 'nodes', 'locales', 'en-US');
    const unlinked: string[] = [];
    for (const file of readdirSync(folder).filter((f) => f.endsWith('.html'))) {
      const help = readFileSync(join(folder, file), 'utf8');
      for (const item of help.match(/<li>.*?<\/li>/gs) ?? [])
        if (/README|docs\/|interface/i.test(item) && !/<a href="https:\/\/[^"]+">/.test(item))
          unlinked.push(`${file}: ${item}`);
      assert.match(help, /<a href="https:\/\/github\.com\/media-enhance\/node-red-media-enhance#readme">/, file);
    }
    assert.deepEqual(unlinked, []);
  });

  it("answers in English where the runtime has no catalog (the test helper's RED._ answers the key)", () => {
    const t = translator({ _: (key) => key });
    assert.equal(t('media-enhance.status.queuedFor', { position: '2nd', wait: '40 s' }), 'queued 2nd, about 40 s');
    assert.equal(t('media-enhance-wait.status.waiting'), 'waiting');
    assert.equal(english('media-enhance.status.nothing'), 'media-enhance.status.nothing');
  });

  it("a translation is one new JSON file: Node-RED's i18n finds it, and English for what it leaves out", async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's i18n, as the runtime gives it to nodes
    const { i18n } = require('@node-red/util') as {
      i18n: {
        init(settings: object): void;
        registerMessageCatalog(namespace: string, dir: string, file: string): Promise<void>;
        _(key: string, options?: object): string;
        /** i18next itself. */
        i: { loadLanguages(languages: string, done: () => void): void };
      };
    };
    const locales = await fsp.mkdtemp(join(tmpdir(), 'me-locales-'));
    try {
      const file = 'media-enhance-config.json';
      await fsp.mkdir(join(locales, 'en-US'));
      await fsp.mkdir(join(locales, 'de'));
      await fsp.copyFile(join(ROOT, 'nodes', 'locales', 'en-US', file), join(locales, 'en-US', file));
      const german = { 'media-enhance': { status: { done: 'fertig', rateLimited: 'Ratenlimit __wait__' } } };
      await fsp.writeFile(join(locales, 'de', file), JSON.stringify(german));
      i18n.init({}); // a no-op when the runtime has started it already
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string };
      await i18n.registerMessageCatalog(`${pkg.name}/media-enhance-config`, locales, file);
      // The runtime loads its own language (settings.js `lang`); this test asks for German besides.
      await new Promise<void>((resolve) => i18n.i.loadLanguages('de', resolve));

      const inGerman = translator({ _: (key, values) => i18n._(key, { ...values, lng: 'de' }) });
      assert.equal(inGerman('media-enhance.status.done'), 'fertig');
      assert.equal(inGerman('media-enhance.status.rateLimited', { wait: '12s' }), 'Ratenlimit 12s');
      assert.equal(inGerman('media-enhance.reason.notFound'), 'media not found');
      const inEnglish = translator({ _: (key, values) => i18n._(key, { ...values, lng: 'en-US' }) });
      assert.equal(inEnglish('media-enhance.status.done'), 'done');
    } finally {
      await fsp.rm(locales, { recursive: true, force: true });
    }
  });
});
