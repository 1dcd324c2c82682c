// The editor's bounds, defaults and choices against the contract's, without a browser: each node's .html
// script runs on the generated editor script with a stand-in RED, as the editor runs it, and its defaults
// and checks are held against the contract's own checks; no .html may hold a number or name of its own.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createContext, runInContext } from 'node:vm';
import { MAX_TIMER_MS } from '../../src/client/clock';
import { IF_EXISTS } from '../../src/client/final-name';
import { DEFAULT_RATE_LIMITS } from '../../src/contract/endpoints';
import {
  checkEnhanceJsonBody,
  checkEnhancementSettings,
  DEFAULT_STEP,
  LOUDNESS_TARGET,
  MODELS,
  SETTINGS_DEFAULTS,
  STEPS,
  SETTINGS_MODELS,
  TRANSCODE_KINDS,
  TRUE_PEAK,
} from '../../src/contract/fields';
import type { FieldIssue } from '../../src/contract/field-issue';
import { EDITOR_GLOBAL, EDITOR_SCRIPT_FILE, editorScriptSrc, renderEditorScript } from '../../src/editor/editor-script';
import { editorValues, type EditorValues } from '../../src/editor/editor-values';
import { fileNameProblem } from '../../src/nodes/file-output';
import { readFilesChoice } from '../../src/nodes/files-choice';
import {
  checkDistinctNames,
  checkFurtherOutputs,
  namesBeforeUpload,
  readFurtherOutputs,
} from '../../src/nodes/output-list';
import { LIMIT_FIELDS, readServiceConfig } from '../../src/nodes/config-options';
import { english } from '../../src/nodes/texts';
import { readWaitTimeoutMs } from '../../src/nodes/wait-node';
import {
  BACKLOG_MS,
  DEFAULT_BACKLOG_MS,
  DEFAULT_MAX_STREAMS,
  MAX_STREAMS,
  readStreamSettings,
} from '../../src/nodes/stream-settings';
import { AUDIO_FIELDS, UPLOAD_FIELDS, VIDEO_FIELDS } from '../../src/nodes/enhancement-fields';
import type { NodeDef } from '../../src/nodes/red';
import { enhancementOf, type EnhancementField, type Enhancement } from '../../src/nodes/enhancement';

const ROOT = join(__dirname, '..', '..', '..');
const MODULE = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string }).name;
const HTML_FILES = readdirSync(join(ROOT, 'nodes')).filter((f) => f.endsWith('.html'));

type Validate = (this: unknown, value: unknown, opt: unknown) => unknown;
interface NodeDefinition {
  defaults: Record<string, { value: unknown; validate?: Validate; label?: string }>;
  credentials?: Record<string, { label?: string }>;
  /** Added on registering, as Node-RED adds it: the type's translation in its own catalog. */
  _?: (key: string) => string;
}

/** A node's English catalog (nodes/locales/en-US/<type>.json). */
function catalogOf(type: string): unknown {
  return JSON.parse(readFileSync(join(ROOT, 'nodes', 'locales', 'en-US', `${type}.json`), 'utf8'));
}

/** The text of a dotted key in a catalog, as Node-RED's def._ gives it: the key itself when there is none. */
function translate(catalog: unknown, key: string): string {
  const text = key.split('.').reduce((at: unknown, part) => (at as Record<string, unknown>)?.[part], catalog);
  return typeof text === 'string' ? text : key;
}

/** The editor script as the build wrote it, run as the browser runs it; its global. */
function loadEditorScript(): EditorValues & Record<string, unknown> {
  const window: Record<string, unknown> = {};
  runInContext(readFileSync(join(ROOT, 'resources', EDITOR_SCRIPT_FILE), 'utf8'), createContext({ window }));
  return window[EDITOR_GLOBAL] as EditorValues & Record<string, unknown>;
}

/** A node file's dialog template, as it stands in the file. */
function templateOf(html: string): string {
  return /<script type="text\/html" data-template-name="[^"]*">([\s\S]*?)<\/script>/.exec(html)![1];
}

/**
 * Each node's definition, and its dialog template as Node-RED will read it, from its .html's scripts run
 * on the editor script in a page that holds every template and no open dialog, as the editor runs them.
 */
/** The config nodes the stand-in RED knows, by id. */
const CONFIG_NODES = new Map<string, Record<string, unknown>>();

function registerTypes(): { types: Map<string, NodeDefinition>; templates: Map<string, string> } {
  const types = new Map<string, NodeDefinition>();
  const templates = new Map<string, string>();
  for (const file of HTML_FILES)
    templates.set(file.replace(/\.html$/, ''), templateOf(readFileSync(join(ROOT, 'nodes', file), 'utf8')));
  const RED = {
    nodes: {
      registerType: (type: string, def: NodeDefinition) => {
        const catalog = catalogOf(type);
        types.set(type, { ...def, _: (key: string) => translate(catalog, key) });
      },
      getType: (type: string) => types.get(type),
      // The config nodes a check may look up by the node's service (CONFIG_NODES, filled by a test).
      node: (id: string) => CONFIG_NODES.get(id),
    },
  };
  // `$` finds a template by its name; a check that looks at a field finds none and reads the saved value.
  const $ = (selector: string) => {
    const type = /^script\[data-template-name="([^"]+)"\]$/.exec(selector)?.[1];
    if (type === undefined || !templates.has(type)) return { length: 0 };
    return {
      length: 1,
      text: (written?: string) => (written === undefined ? templates.get(type) : void templates.set(type, written)),
    };
  };
  const context = createContext({ window: {}, RED, $ });
  runInContext(readFileSync(join(ROOT, 'resources', EDITOR_SCRIPT_FILE), 'utf8'), context);
  for (const file of HTML_FILES) {
    const html = readFileSync(join(ROOT, 'nodes', file), 'utf8');
    for (const [, code] of html.matchAll(/<script type="text\/javascript">([\s\S]*?)<\/script>/g))
      runInContext(code, context, { filename: file });
  }
  return { types, templates };
}

/** A node as the editor creates it: every property at its default. */
function newNode(type: string, def: NodeDefinition): NodeDef {
  return {
    id: 'n1',
    type,
    ...Object.fromEntries(Object.entries(def.defaults).map(([prop, { value }]) => [prop, value])),
  };
}

function editorAccepts(type: string, def: NodeDefinition, prop: string, value: string): boolean {
  return editorVerdict(type, def, prop, value) === true;
}

/** The dialog's check of `value`: true, or the reason it shows. */
function editorVerdict(type: string, def: NodeDefinition, prop: string, value: string): unknown {
  const validate = def.defaults[prop].validate;
  assert.ok(validate, `${prop} has a check`);
  // Node-RED shows a returned reason only from a check declared (value, opt).
  assert.equal(validate.length, 2, `${prop}'s check takes (value, opt)`);
  return validate.call({ ...newNode(type, def), [prop]: value }, value, {});
}

/** Each media node's settings as its runtime reads them, and the contract's check of the request they make. */
const MEDIA_NODES: Record<
  string,
  { fields: readonly EnhancementField[]; check: (settings: Enhancement) => FieldIssue[] }
> = {
  'media-enhance-audio': {
    fields: AUDIO_FIELDS,
    check: (s) => checkEnhanceJsonBody({ file_download_url: 'https://example.com/a.wav', file_name: 'a.wav', ...s }),
  },
  'media-enhance-video': { fields: VIDEO_FIELDS, check: (s) => checkEnhancementSettings(s, 'video_enhancement') },
  'media-enhance-upload': { fields: UPLOAD_FIELDS, check: (s) => checkEnhancementSettings(s, 'media_enhancement') },
  'media-enhance-file': { fields: UPLOAD_FIELDS, check: (s) => checkEnhancementSettings(s, 'media_enhancement') },
};

/**
 * What a user may type, in plain notation (the editor asks for digits where the runtime would also read
 * 1e1): every whole number around every bound, fractions, empty, words and each enum member.
 */
const SAMPLES = [
  ...Array.from({ length: 201 }, (_, i) => String(i - 90)),
  ...['-70.5', '-16.5', '-0.5', '0.25', '0.5', '0.99', '1.01', '99.5', ' -16 ', '', 'abc', 'lark_v2', 'NONE'],
  ...MODELS,
  ...TRANSCODE_KINDS,
];

describe('the editor script and the node dialogs, against the contract', () => {
  const { types, templates } = registerTypes();
  const definition = (type: string) => {
    const def = types.get(type);
    assert.ok(def, `${type} is registered`);
    return def;
  };

  it('is the script the sources make, written where Node-RED serves it and loaded by every node file first', () => {
    assert.equal(
      readFileSync(join(ROOT, 'resources', EDITOR_SCRIPT_FILE), 'utf8'),
      renderEditorScript(editorValues()),
      'npm run build wrote it from the current sources',
    );
    for (const file of HTML_FILES) {
      const html = readFileSync(join(ROOT, 'nodes', file), 'utf8');
      assert.ok(
        html.startsWith(`<script src="${editorScriptSrc(MODULE)}"></script>\n`),
        `${file} loads resources/${MODULE}/${EDITOR_SCRIPT_FILE} before its own script`,
      );
    }
    assert.deepEqual([...types.keys()].sort(), HTML_FILES.map((f) => f.replace(/\.html$/, '')).sort());
  });

  it('writes the shared rows into each dialog: one field for each property the node saves, labelled as its own', () => {
    for (const [type, template] of templates) {
      assert.doesNotMatch(template, /data-media-enhance-rows/, `${type}: every marker is replaced`);
      const def = definition(type);
      // Node-RED fills, checks and saves the field of id <prefix>-<property> for each property it defines; a
      // list property is an editableList of id <prefix>-<property>-container, which the dialog fills and saves.
      const prefix = def.credentials ? 'node-config-input' : 'node-input';
      const fields = [...template.matchAll(/\sid="([^"]+)"/g)].map(([, id]) =>
        id.replace(`${prefix}-`, '').replace(/-container$/, ''),
      );
      const saved = [...Object.keys(def.defaults), ...Object.keys(def.credentials ?? {})];
      assert.deepEqual([...fields].sort(), [...saved].sort(), `${type}: one field for each saved property`);
      const messages = catalogOf(type);
      for (const [, key] of template.matchAll(/data-i18n="(?:\[placeholder\])?([^"]+)"/g)) {
        assert.ok(key.startsWith(`${type}.`), `${type}: ${key} is one of its own translations`);
        const text = key.split('.').reduce((at: unknown, part) => (at as Record<string, unknown>)?.[part], messages);
        assert.equal(typeof text, 'string', `${type}: ${key} has an English text`);
      }
    }
  });

  it('labels every setting as its dialog does, and names in a reason the setting, the value and the rule', () => {
    for (const [type, def] of types) {
      const catalog = catalogOf(type);
      for (const [prop, setting] of Object.entries({ ...def.defaults, ...def.credentials })) {
        const label = translate(catalog, `${type}.label.${prop}`);
        assert.notEqual(label, `${type}.label.${prop}`, `${type}: ${prop} has a label in its catalog`);
        assert.equal(setting.label, label, `${type}: ${prop} is labelled as its dialog labels it`);
      }
    }
    // Node-RED passes the label to the check as opt.label (editor.js, validateNodeProperty).
    const file = definition('media-enhance-file');
    const check = (prop: string, value: unknown, node: Record<string, unknown> = {}) =>
      file.defaults[prop].validate!.call({ ...newNode('media-enhance-file', file), ...node }, value, {
        label: file.defaults[prop].label,
      });
    assert.equal(
      check('loudnessTarget', '-16.5'),
      `Target loudness: a whole number from ${LOUDNESS_TARGET.min} to ${LOUDNESS_TARGET.max}, or empty for the service's default (got "-16.5")`,
    );
    assert.equal(
      check('folder', ' ', { output: 'file' }),
      'Folder: a folder is required to write files to (it is empty)',
    );
    assert.equal(check('folder', '', { output: 'buffer' }), true);
    assert.equal(
      check('fileName', `${'x'.repeat(300)}`),
      `File name: a file name of at most 255 bytes in UTF-8 (this one has 300) (got "${'x'.repeat(39)}\u2026")`,
    );
    // Without a label (a dialog field of a type registered elsewhere), the reason still says the rule and value.
    assert.equal(
      file.defaults.truePeak.validate!.call(newNode('media-enhance-file', file), 'x', {}),
      `a whole number from ${TRUE_PEAK.min} to ${TRUE_PEAK.max}, or empty for the service's default (got "x")`,
    );
  });

  it("gives a new media node the service's defaults, as a request the contract accepts", () => {
    const v2Defaults = {
      loudness_target: SETTINGS_DEFAULTS.loudness_target,
      true_peak: SETTINGS_DEFAULTS.true_peak,
      enhancement_level: SETTINGS_DEFAULTS.enhancement_level,
      enhancement_model: SETTINGS_DEFAULTS.enhancement_model,
    };
    for (const [type, { fields, check }] of Object.entries(MEDIA_NODES)) {
      const settings = enhancementOf(newNode(type, definition(type)), fields);
      assert.deepEqual(check(settings), [], `${type}'s defaults pass the contract's check`);
      if (type === 'media-enhance-audio') {
        // v1 names the members otherwise and takes the level as a fraction.
        assert.deepEqual(settings, {
          loudness_target_level: v2Defaults.loudness_target,
          loudness_peak_limit: v2Defaults.true_peak,
          enhancement_level: v2Defaults.enhancement_level / 100,
          transcode_kind: null,
          model_arch: v2Defaults.enhancement_model,
        });
      } else {
        const { transcode, ...rest } = settings;
        assert.deepEqual(rest, v2Defaults, type);
        assert.equal(transcode, undefined, `${type} keeps the input's format`);
      }
    }
    assert.equal(newNode('media-enhance-download', definition('media-enhance-download')).step, DEFAULT_STEP);
  });

  it('accepts in each setting of each media node exactly the values the contract accepts', () => {
    const disagreements: string[] = [];
    for (const [type, { fields, check }] of Object.entries(MEDIA_NODES)) {
      const def = definition(type);
      for (const field of fields) {
        for (const value of SAMPLES) {
          const settings = enhancementOf({ ...newNode(type, def), [field.prop]: value }, fields);
          const contractAccepts = !check(settings).some((issue) => issue.loc.at(-1) === field.member);
          if (editorAccepts(type, def, field.prop, value) !== contractAccepts)
            disagreements.push(`${type} ${field.prop} ${JSON.stringify(value)}: contract ${contractAccepts}`);
        }
      }
    }
    assert.deepEqual(disagreements, []);
  });

  it("refuses, with the contract's rule, a setting that cannot apply beside another: a trim with LOUDNESS_ONLY, a bitrate with WAV", () => {
    const asked: Record<string, string | boolean> = {
      bitrate: '128',
      bitrateMode: 'CBR',
      sampleRate: '44100',
      downmixMono: true,
      trimPauses: '1.5',
      dereverb: true,
    };
    const disagreements: string[] = [];
    let refused = 0;
    for (const type of ['media-enhance-upload', 'media-enhance-file']) {
      const def = definition(type);
      for (const model of ['', ...SETTINGS_MODELS])
        for (const transcode of ['', ...TRANSCODE_KINDS])
          for (const [prop, value] of Object.entries(asked)) {
            const node = { ...newNode(type, def), model, transcode, [prop]: value };
            const field = UPLOAD_FIELDS.find((f) => f.prop === prop)!;
            const issue = checkEnhancementSettings(enhancementOf(node, UPLOAD_FIELDS), 'media_enhancement').find(
              (i) => i.loc.at(-1) === field.member,
            );
            const verdict = def.defaults[prop].validate!.call(node, value as string, {
              label: def.defaults[prop].label,
            });
            if (issue) refused++;
            const agrees = issue ? typeof verdict === 'string' && verdict.includes(issue.msg) : verdict === true;
            if (!agrees) disagreements.push(`${type} ${prop} ${value} (${model}, ${transcode}): ${String(verdict)}`);
          }
    }
    assert.deepEqual(disagreements, []);
    // Each dialog: four encoding choices with WAV under each of the five models, a trim and room echo
    // reduction with LOUDNESS_ONLY under each transcode.
    assert.equal(refused, 2 * (4 * 5 + 3 + 3));
    const upload = definition('media-enhance-upload');
    assert.equal(
      upload.defaults.trimPauses.validate!.call(
        { ...newNode('media-enhance-upload', upload), model: 'LOUDNESS_ONLY' },
        '2',
        {
          label: upload.defaults.trimPauses.label,
        },
      ),
      `${upload.defaults.trimPauses.label}: finds pauses by the voice activity a speech model measures, and LOUDNESS_ONLY runs no speech model: choose FINCH, LARK or LARK_V2, or leave it out (got "2")`,
    );
    // The room echo tick box unticked asks for nothing, whatever the model.
    const loudnessOnly = { ...newNode('media-enhance-upload', upload), model: 'LOUDNESS_ONLY' };
    assert.equal(upload.defaults.dereverb.validate!.call(loudnessOnly, false as never, {}), true);
  });

  it("accepts in enhance file's further outputs exactly the rows the node accepts at run time", () => {
    const def = definition('media-enhance-file');
    const validate = def.defaults.furtherOutputs.validate!;
    assert.equal(validate.length, 2, "the list's check takes (value, opt)");
    const row = (changes: Record<string, unknown>) => ({
      name: 'feed',
      transcode: '',
      bitrate_kbps: '',
      bitrate_mode: '',
      sample_rate_hz: '',
      downmix_mono: false,
      file_name: '',
      ...changes,
    });
    const lists: Record<string, unknown>[][] = [
      [],
      [row({})],
      ...['Feed', 'enhanced', 'pre', 'a'.repeat(32), 'a'.repeat(33), '', '-feed', 'feed_2', 'f.x'].map((name) => [
        row({ name }),
      ]),
      [row({}), row({})],
      [row({}), row({ name: 'master', transcode: 'WAV' })],
      ...['MP3', 'WAV', 'OGG', 'mp3'].map((transcode) => [row({ transcode })]),
      ...['64', '320', '63', '321', '128.5', 'abc'].map((bitrate_kbps) => [row({ bitrate_kbps, transcode: 'MP3' })]),
      ...['CBR', 'VBR', 'ABR'].map((bitrate_mode) => [row({ bitrate_mode })]),
      ...['44100', '16000', '44101'].map((sample_rate_hz) => [row({ sample_rate_hz })]),
      [row({ transcode: 'WAV', bitrate_kbps: '128' })],
      [row({ transcode: 'WAV', downmix_mono: true })],
      [row({ transcode: 'MP3', downmix_mono: true })],
      ...[
        '{stem}_{name}.{ext}',
        '{title}.mp3',
        'a/b.mp3',
        '..',
        ' ',
        'feed.mp3',
        'a\u0001b.mp3',
        ' .. ',
        '. ',
        '{stem}.',
        '{stem}{ext}',
        'é'.repeat(127) + '.m',
        'é'.repeat(128),
        '{stem}' + 'a'.repeat(254),
        '{stem}' + 'a'.repeat(255),
        '{name}/x',
      ].map((file_name) => [row({ file_name })]),
      ['a', 'b', 'c', 'd', 'e'].map((name) => row({ name })),
      ['a', 'b', 'c', 'd'].map((name) => row({ name })),
      // Two files of one message under one name (a row's and the node's file name ep.wav below).
      [row({ file_name: 'a.wav' }), row({ name: 'master', file_name: ' a.wav' })],
      [row({ file_name: '{stem}.wav' }), row({ name: 'master', file_name: '{stem}.wav' })],
      [row({ file_name: 'ep.wav' })],
      [row({ file_name: 'ep.wav ' })],
      // Names that differ only in case: one file on macOS's and Windows' file systems.
      [row({ file_name: 'EP.wav' })],
      [row({ file_name: 'A.wav' }), row({ name: 'master', file_name: 'a.WAV' })],
      [row({ file_name: '{stem}.wav' })],
    ];
    const disagreements: string[] = [];
    for (const output of ['file', 'buffer'])
      for (const list of lists) {
        const node = { ...newNode('media-enhance-file', def), output, fileName: 'ep.wav', furtherOutputs: list };
        const editor = validate.call(node, list as never, {}) === true;
        let runtime = true;
        try {
          // As the node checks its settings at deploy.
          const outputs = readFurtherOutputs((key) => key, node, {});
          checkFurtherOutputs((key) => key, outputs, {});
          const first = { name: node.fileName, field: 'fileName' };
          if (output === 'file')
            checkDistinctNames(
              (key) => key,
              namesBeforeUpload((key) => key, first, outputs),
            );
        } catch {
          runtime = false;
        }
        if (editor !== runtime) disagreements.push(`${output} ${JSON.stringify(list)}: runtime ${runtime}`);
      }
    assert.deepEqual(disagreements, []);
  });

  it("accepts in download's named outputs exactly the names the node accepts at run time", () => {
    const def = definition('media-enhance-download');
    const validate = def.defaults.outputNames.validate!;
    const disagreements: string[] = [];
    for (const text of [
      'enhanced',
      'enhanced, master',
      'pre',
      'enhanced pre',
      'Master',
      'a'.repeat(33),
      '',
      'feed_2',
    ]) {
      const node = { ...newNode('media-enhance-download', def), files: 'named', outputNames: text };
      const editor = validate.call(node, text as never, {}) === true;
      let runtime = true;
      try {
        readFilesChoice((key) => key, node, {});
      } catch {
        runtime = false;
      }
      if (editor !== runtime) disagreements.push(`${JSON.stringify(text)}: runtime ${runtime}`);
    }
    assert.deepEqual(disagreements, []);
  });

  it("refuses an extension's setting on a remote service listed as not declaring it, and only there", () => {
    const def = types.get('media-enhance-upload')!;
    const check = (prop: string, value: unknown, service: string) =>
      def.defaults[prop].validate!.call({ ...newNode('media-enhance-upload', def), service }, value as string, {
        label: 'Setting',
      });
    CONFIG_NODES.set('cluster', {
      type: 'media-enhance-config',
      name: 'cluster',
      mode: 'remote',
      extensions: 'listed',
    });
    CONFIG_NODES.set('asked', { type: 'media-enhance-config', mode: 'remote', extensions: 'ask' });
    CONFIG_NODES.set('local', { type: 'media-enhance-config', mode: 'local' });
    CONFIG_NODES.set('encoding', {
      type: 'media-enhance-config',
      mode: 'remote',
      extensions: 'listed',
      declaresOutputEncoding: true,
    });
    try {
      assert.match(
        String(check('model', 'LOUDNESS_ONLY', 'cluster')),
        /^Setting: uses the "loudness-only" extension, which the service "cluster" does not declare .*\(got "LOUDNESS_ONLY"\)$/,
      );
      assert.match(String(check('bitrate', '128', 'cluster')), /"output-encoding" extension/);
      assert.match(String(check('downmixMono', true, 'cluster')), /"output-encoding" extension/);
      assert.equal(check('downmixMono', false, 'cluster'), true, 'unticked uses nothing');
      assert.equal(check('model', 'FINCH', 'cluster'), true, 'a model of the interface');
      for (const service of ['asked', 'local'])
        assert.equal(check('model', 'LOUDNESS_ONLY', service), true, `${service}: declared, or asked at run time`);
      assert.equal(check('bitrate', '128', 'encoding'), true);
      assert.match(String(check('model', 'LOUDNESS_ONLY', 'encoding')), /"loudness-only"/);
      assert.match(String(check('bitrate', '1000', 'cluster')), /from 64 to 320/, "the value's own rule first");
    } finally {
      CONFIG_NODES.clear();
    }
  });

  it('offers the dereverb extension as a tick box on enhance file and upload: off by default, ticked sends 100', () => {
    CONFIG_NODES.set('cluster', {
      type: 'media-enhance-config',
      name: 'cluster',
      mode: 'remote',
      extensions: 'listed',
    });
    CONFIG_NODES.set('declares', {
      type: 'media-enhance-config',
      mode: 'remote',
      extensions: 'listed',
      declaresDereverb: true,
    });
    try {
      for (const type of ['media-enhance-file', 'media-enhance-upload']) {
        const def = definition(type);
        assert.equal(def.defaults.dereverb.value, false, `${type}: off by default`);
        assert.match(templates.get(type)!, /<input type="checkbox" id="node-input-dereverb"/, `${type}: a tick box`);
        const node = newNode(type, def);
        assert.deepEqual(enhancementOf(node, UPLOAD_FIELDS).dereverb, undefined, 'unticked: not sent');
        const ticked = enhancementOf({ ...node, dereverb: true }, UPLOAD_FIELDS);
        assert.equal(ticked.dereverb, 100);
        assert.deepEqual(checkEnhancementSettings(ticked, 'media_enhancement'), [], 'the contract takes it');
        const check = (value: boolean, service: string) =>
          def.defaults.dereverb.validate!.call({ ...node, service }, value as unknown as string, { label: 'Echo' });
        assert.match(
          String(check(true, 'cluster')),
          /^Echo: uses the "dereverb" extension, which the service "cluster" does not declare/,
        );
        assert.equal(check(false, 'cluster'), true, 'unticked uses nothing');
        assert.equal(check(true, 'declares'), true, 'a service that declares it');
      }
      const remote = { id: 'c', type: 'c', mode: 'remote', baseUrl: 'http://127.0.0.1:1', extensions: 'listed' };
      const listed = (def: Partial<NodeDef>) => readServiceConfig(english, { ...remote, ...def }).extensions;
      assert.deepEqual(listed({ declaresDereverb: true }), ['dereverb'], 'the config node passes it to the client');
      assert.deepEqual(listed({}), [], 'unticked in the config node: not declared');
    } finally {
      CONFIG_NODES.clear();
    }
  });

  it('accepts in the download step exactly the steps of the contract', () => {
    const def = definition('media-enhance-download');
    for (const value of [...SAMPLES, ...STEPS, 'enhanced'])
      assert.equal(
        editorAccepts('media-enhance-download', def, 'step', value),
        (STEPS as readonly string[]).includes(value),
        value,
      );
  });

  it('accepts as a file name and "if the file exists" exactly what the runtime takes', () => {
    const names = [
      '',
      'talk.wav',
      `${'é'.repeat(125)}.wav`,
      `${'é'.repeat(127)}.wav`,
      'a\nb.wav',
      'tab\t.wav',
      '../x',
      'a/b',
    ];
    const choices = ['', ...IF_EXISTS, 'replace', 'NUMBER'];
    for (const type of ['media-enhance-file', 'media-enhance-download']) {
      const def = definition(type);
      for (const name of names)
        assert.equal(
          editorAccepts(type, def, 'fileName', name),
          name.trim() === '' || fileNameProblem(undefined, name) === undefined,
          `${type} ${JSON.stringify(name)}`,
        );
      for (const choice of choices)
        assert.equal(
          editorAccepts(type, def, 'ifExists', choice),
          choice === '' || (IF_EXISTS as readonly string[]).includes(choice),
          `${type} ${choice}`,
        );
    }
  });

  it('takes as a timeout the values its runtime takes (seconds from 1 to the longest a timer holds, or empty), and both say so', () => {
    const seconds = Math.floor(MAX_TIMER_MS / 1000);
    const rule = new RegExp(`from 1 to ${seconds}\\b`);
    const values = [
      ['', '  ', '1', ' 1.5 ', '60', '1e3', String(seconds)],
      ['0', '0.5', '0.999', '-1', 'abc', 'Infinity', 'NaN', String(seconds + 1)],
    ].flat();
    // What deploying the value does: the runtime's reading of the same setting, its milliseconds or its error.
    const runtimes: [string, string, (value: string) => number | undefined][] = [
      ['media-enhance-wait', 'timeout', (value) => readWaitTimeoutMs(english, { id: 'w', type: 'w', timeout: value })],
      [
        'media-enhance-config',
        'waitTimeout',
        (value) => readServiceConfig(english, { id: 'c', type: 'c', waitTimeout: value }).waitTimeoutMs,
      ],
      [
        'media-enhance-config',
        'requestTimeout',
        (value) => readServiceConfig(english, { id: 'c', type: 'c', requestTimeout: value }).requestTimeoutMs,
      ],
    ];
    for (const [type, prop, atDeploy] of runtimes) {
      for (const value of values) {
        const what = `${type} ${prop} ${JSON.stringify(value)}`;
        const verdict = editorVerdict(type, definition(type), prop, value);
        let refused: string | undefined;
        try {
          const ms = atDeploy(value);
          assert.equal(ms, value.trim() === '' ? undefined : Number(value) * 1000, `${what}: milliseconds`);
        } catch (err) {
          if (err instanceof assert.AssertionError) throw err;
          refused = (err as Error).message;
        }
        assert.equal(verdict === true, refused === undefined, `${what}: editor ${String(verdict)}, runtime ${refused}`);
        if (refused !== undefined) {
          assert.match(String(verdict), rule, `${what}: the editor's reason`);
          assert.match(refused, rule, `${what}: the runtime's reason`);
        }
      }
    }
  });

  it("takes in enhance stream's backlog and streams settings what its runtime takes, empty as the default", () => {
    const stream = definition('media-enhance-stream');
    for (const [prop, bounds, fallback, read] of [
      ['backlog', BACKLOG_MS, DEFAULT_BACKLOG_MS, 'backlogMs'],
      ['maxStreams', MAX_STREAMS, DEFAULT_MAX_STREAMS, 'maxStreams'],
    ] as const) {
      const values = [
        '',
        ' ',
        String(bounds.min),
        String(bounds.max),
        '100',
        String(bounds.min - 1),
        String(bounds.max + 1),
      ];
      for (const value of [...values, '1.5', 'abc', '-3']) {
        const what = `${prop} ${JSON.stringify(value)}`;
        const verdict = editorVerdict('media-enhance-stream', stream, prop, value);
        let taken: number | undefined;
        let refused: string | undefined;
        try {
          taken = readStreamSettings(english, { id: 's', type: 's', [prop]: value })[read];
        } catch (err) {
          refused = (err as Error).message;
        }
        assert.equal(verdict === true, refused === undefined, `${what}: editor ${String(verdict)}, runtime ${refused}`);
        if (refused === undefined) assert.equal(taken, value.trim() === '' ? fallback : Number(value), what);
        else
          assert.match(
            String(verdict),
            new RegExp(`a whole number from ${bounds.min} to ${bounds.max}, or empty for ${fallback}`),
          );
      }
    }
  });

  it("shows as placeholders the service's rate limits and the client's request timeout", () => {
    const { defaults, bounds } = loadEditorScript();
    for (const { endpoint, prop } of LIMIT_FIELDS) {
      const limit = DEFAULT_RATE_LIMITS[endpoint];
      assert.equal(defaults[prop], limit === null ? undefined : String(limit), prop);
    }
    assert.equal(defaults.requestTimeout, '60');
    // Every hint a dialog marks, in its own rows or the shared ones, names a value the script holds.
    for (const [type, template] of templates) {
      for (const [, name] of template.matchAll(/data-media-enhance-range="([^"]*)"/g))
        assert.ok(name in bounds, `${type}: bound ${name}`);
      for (const [, name] of template.matchAll(/data-media-enhance-placeholder="([^"]*)"/g))
        assert.ok(name in defaults, `${type}: default ${name}`);
    }
  });

  it('shows no rate-limit placeholder for the built-in engine, which has no limits unless set', () => {
    // The config dialog's limit fields, as jQuery finds them, and the placeholders written into them.
    const fields = LIMIT_FIELDS.filter(({ endpoint }) => DEFAULT_RATE_LIMITS[endpoint] !== null).map(({ prop }) => ({
      prop,
      placeholder: '',
    }));
    const $ = (selector: string) => {
      assert.equal(selector, 'input[data-media-enhance-placeholder^="limit"]');
      return {
        toArray: () => fields,
      };
    };
    const element$ = (field: { prop: string; placeholder: string }) => ({
      attr: (name: string, value?: string) => {
        if (name === 'data-media-enhance-placeholder') return field.prop;
        field.placeholder = value ?? '';
        return undefined;
      },
    });
    const window: Record<string, unknown> = {};
    const context = createContext({
      window,
      $: (target: unknown) => (typeof target === 'string' ? $(target) : element$(target as (typeof fields)[number])),
    });
    runInContext(readFileSync(join(ROOT, 'resources', EDITOR_SCRIPT_FILE), 'utf8'), context);
    const editor = window[EDITOR_GLOBAL] as { showLimitPlaceholders: (local: boolean, noLimit: string) => void };
    assert.ok(fields.length > 0);
    editor.showLimitPlaceholders(true, 'no limit');
    assert.deepEqual(
      fields.map((field) => field.placeholder),
      fields.map(() => 'no limit'),
    );
    editor.showLimitPlaceholders(false, 'no limit');
    const { defaults } = loadEditorScript();
    assert.deepEqual(
      fields.map((field) => field.placeholder),
      fields.map((field) => defaults[field.prop]),
    );
  });

  it('puts under each loudness field its hint: whole numbers, and the usual targets', () => {
    for (const [type, template] of templates) {
      if (!/id="node-input-loudnessTarget"/.test(template)) continue;
      assert.match(template, new RegExp(`data-i18n="${type}\\.hint\\.loudnessTarget"`), type);
      const messages = JSON.parse(
        readFileSync(join(ROOT, 'nodes', 'locales', 'en-US', `${type}.json`), 'utf8'),
      ) as Record<string, { hint: { loudnessTarget: string } }>;
      assert.match(
        messages[type].hint.loudnessTarget,
        /^whole numbers only; usual targets: -16 podcast \(stereo\), -19 podcast \(mono\), -23 broadcast/,
      );
    }
  });

  it('leaves in the node files no number and no name that the contract holds', () => {
    const names = [...MODELS, ...TRANSCODE_KINDS, ...STEPS];
    for (const file of HTML_FILES) {
      const html = readFileSync(join(ROOT, 'nodes', file), 'utf8')
        .replace(/^<script src="[^"]*"><\/script>/, '')
        // Translation keys are named after the values they label; layout and port counts are no bounds.
        .replace(/\s(?:data-i18n|style)="[^"]*"/g, '')
        .replace(/\b(?:inputs|outputs): 1\b/g, '');
      assert.deepEqual(html.match(/-?\b\d+(?:\.\d+)?\b/g) ?? [], [], `${file}: numbers are MediaEnhanceEditor's`);
      assert.deepEqual(
        names.filter((name) => new RegExp(`\\b${name}\\b`).test(html)),
        [],
        `${file}: choices are MediaEnhanceEditor's`,
      );
    }
  });
});
