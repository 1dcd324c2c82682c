// The checks of the editor's dialogs, written once for every node. They run in the browser: the build
// copies their source into the editor script (editor-script.ts), so each is a function declaration that
// uses only its parameters, the other functions here and the editor's globals.

export interface Bounds {
  readonly min: number;
  readonly max: number;
}

/** What Node-RED passes as `this` to a validator: the node being edited. */
export type EditedNode = Record<string, unknown>;

/** What a dialog's field holds. */
export type FieldValue = string | number | boolean | null | undefined;

/** Valid, or the reason it is not. */
export type Verdict = true | string;

export type Validator = (this: EditedNode, value: FieldValue, opt: unknown) => Verdict;

/** The little of jQuery (the editor's `$`) these checks use. */
interface Field {
  length: number;
  val(): unknown;
}
declare const $: (selector: string) => Field;

/**
 * Node-RED shows a returned string as the reason only when the validator declares two parameters. Its
 * options carry the setting's label when the definition has one (labelSettings, dialog.ts, gives each
 * setting its dialog's label), so the reason names the setting, the value and the rule: Node-RED lists it
 * at the field, beside the node's warning triangle and, through the editor plugin, in the deploy warning.
 */
function withReason(check: (this: EditedNode, value: FieldValue) => Verdict): Validator {
  return function (this: EditedNode, value: FieldValue, opt: unknown): Verdict {
    const verdict = check.call(this, value);
    if (verdict === true) return true;
    const label = opt && typeof (opt as { label?: unknown }).label === 'string' ? (opt as { label: string }).label : '';
    return (label ? label + ': ' : '') + verdict + ' (' + valueShown(value) + ')';
  };
}

/** The value a reason names: quoted, and cut short when long (a file name may have 255 bytes). */
function valueShown(value: FieldValue): string {
  const text = String(value === undefined || value === null ? '' : value);
  if (text.trim() === '') return 'it is empty';
  return 'got "' + (text.length > 40 ? text.slice(0, 39) + '\u2026' : text) + '"';
}

function textOf(value: FieldValue): string {
  return String(value === undefined || value === null ? '' : value).trim();
}

/** A required number within the bounds, whole with `integer` (the v1 request needs every setting). */
export function numberIn(bounds: Bounds, integer: boolean): Validator {
  return withReason(function (value) {
    const text = textOf(value);
    const n = Number(text);
    const ok =
      text !== '' && Number.isFinite(n) && n >= bounds.min && n <= bounds.max && (!integer || Math.floor(n) === n);
    return ok || `a ${integer ? 'whole number' : 'number'} from ${bounds.min} to ${bounds.max} is required`;
  });
}

/** Empty takes the service's default; otherwise a whole number within the bounds. */
export function integerOrEmpty(bounds: Bounds): Validator {
  return withReason(function (value) {
    const text = textOf(value);
    return (
      text === '' ||
      (/^-?\d+$/.test(text) && Number(text) >= bounds.min && Number(text) <= bounds.max) ||
      `a whole number from ${bounds.min} to ${bounds.max}, or empty for the service's default`
    );
  });
}

/**
 * Seconds within the bounds, or empty; the reason says the lowest as `minSaid` and what empty means as
 * `whenEmpty`.
 */
function secondsOrEmptyFrom(bounds: Bounds, minSaid: string | number, whenEmpty: string): Validator {
  return withReason(function (value) {
    const text = textOf(value);
    const n = Number(text);
    return (
      text === '' ||
      (Number.isFinite(n) && n >= bounds.min && n <= bounds.max) ||
      `a number of seconds from ${minSaid} to ${bounds.max}, ${whenEmpty}`
    );
  });
}

/** Empty leaves every pause as it is; otherwise seconds within the bounds (trim_pauses_s). */
export function trimPausesOrEmpty(bounds: Bounds): Validator {
  return secondsOrEmptyFrom(bounds, bounds.min, 'or empty to keep every pause');
}

/** Empty takes `defaultValue`; otherwise a number within the bounds, whole with `integer`. */
export function numberOrDefault(bounds: Bounds, integer: boolean, defaultValue: number): Validator {
  return withReason(function (value) {
    const text = textOf(value);
    const n = Number(text);
    return (
      text === '' ||
      (Number.isFinite(n) && n >= bounds.min && n <= bounds.max && (!integer || Math.floor(n) === n)) ||
      `a ${integer ? 'whole number' : 'number'} from ${bounds.min} to ${bounds.max}, or empty for ${defaultValue}`
    );
  });
}

/** Empty means the default; otherwise a whole number above 0. */
export function positiveIntegerOrEmpty(): Validator {
  return withReason(function (value) {
    const text = textOf(value);
    return (
      text === '' || (/^\d+$/.test(text) && Number(text) > 0) || 'a whole number above 0, or empty for the default'
    );
  });
}

/**
 * A timeout: seconds from 1 (less is never useful: a wait would end before the service's first answer) to
 * the longest a timer holds, or empty (`whenEmpty` says what empty means). The runtime checks the same
 * rule (src/nodes/timeout-setting.ts).
 */
export function secondsOrEmpty(maxSeconds: number, whenEmpty: string): Validator {
  return secondsOrEmptyFrom({ min: 1, max: maxSeconds }, 1, whenEmpty);
}

/** Seconds a file must stay unchanged before it is read: 0 (do not wait) to `maxSeconds`, or empty for the default. */
export function settleSecondsOrEmpty(maxSeconds: number, defaultSeconds: number): Validator {
  return secondsOrEmptyFrom({ min: 0, max: maxSeconds }, '0 (do not wait)', `or empty for ${defaultSeconds}`);
}

/** Seconds of crossfade between an intro, the episode and an outro: 0 to `maxSeconds`, or empty for none. */
export function crossfadeSecondsOrEmpty(maxSeconds: number): Validator {
  return secondsOrEmptyFrom({ min: 0, max: maxSeconds }, 0, 'or empty for none');
}

/** Empty, or the path of a file: text without control characters (whether the file is there is checked per message). */
export function filePathOrEmpty(): Validator {
  return withReason(function (value) {
    const path = String(value || '');
    // eslint-disable-next-line no-control-regex -- control characters are what this check refuses
    return !/[\u0000-\u001f\u007f]/.test(path) || 'a file path without control characters';
  });
}

/** One of `allowed`; an empty entry allows an empty value and is left out of the reason. */
export function oneOf(allowed: readonly string[]): Validator {
  return withReason(function (value) {
    return (
      (allowed as readonly FieldValue[]).indexOf(value || '') !== -1 || `one of ${allowed.filter(Boolean).join(', ')}`
    );
  });
}

/** A checkbox: ticked or not (empty, a node saved before it existed, is unticked). */
export function booleanOrEmpty(): Validator {
  return withReason(function (value) {
    return value === true || value === false || textOf(value) === '' || 'ticked or not (true or false)';
  });
}

/** One of a few `allowed` words, named in the reason as "a or b". */
export function either(allowed: readonly string[]): Validator {
  return withReason(function (value) {
    return (allowed as readonly FieldValue[]).indexOf(value) !== -1 || allowed.join(' or ');
  });
}

/** The dialog's choice while it is open, else the node's saved one. */
function currentOutput(node: EditedNode): unknown {
  const field = $('#node-input-output');
  return field.length ? field.val() : node.output;
}

/** Nodes that write files or hand on a Buffer: a folder is needed only for files. */
export function folderForFiles(): Validator {
  return withReason(function (value) {
    return (
      currentOutput(this) !== 'file' || String(value || '').trim() !== '' || 'a folder is required to write files to'
    );
  });
}

/**
 * Empty keeps the media's own name; otherwise a name without a folder part or control character, of at
 * most 255 bytes in UTF-8 (as the runtime checks it: src/nodes/file-output.ts).
 */
export function fileNameOrEmpty(): Validator {
  return withReason(function (value) {
    const name = String(value || '').trim();
    if (name === '') return true;
    if (/[/\\]/.test(name) || name === '.' || name === '..') return 'a file name without a folder part';
    // eslint-disable-next-line no-control-regex -- control characters are what this check refuses
    if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'a file name without control characters';
    const bytes = encodeURIComponent(name).replace(/%[0-9A-F]{2}/g, 'x').length;
    return bytes <= 255 || `a file name of at most 255 bytes in UTF-8 (this one has ${bytes})`;
  });
}

/**
 * Shared limits: a redis:// or rediss:// URL, or empty. A password belongs in its own field, kept with the
 * credentials: written in the URL it would be saved in flows.json.
 */
export function redisUrlOrEmpty(): Validator {
  return withReason(function (value) {
    const url = textOf(value);
    if (url === '') return true;
    if (!/^rediss?:\/\/\S+$/i.test(url))
      return "a redis:// or rediss:// URL, or empty to keep this instance's own limits";
    return !/^rediss?:\/\/[^/@]*:[^/@]*@/i.test(url) || 'a URL without a password: put it in the password field';
  });
}

/** The little of the editor's RED that declaredExtension reads: a config node by its id. */
interface ServiceNode {
  type: string;
  name?: string;
  mode?: string;
  baseUrl?: string;
  /** 'listed': the extensions ticked in its dialog; else (unset too) the service is asked at run time. */
  extensions?: string;
  declaresOutputEncoding?: boolean;
  declaresLoudnessOnly?: boolean;
  declaresTrimPauses?: boolean;
  declaresSeveralOutputs?: boolean;
  declaresDereverb?: boolean;
}
declare const RED: { nodes: { node(id: string): ServiceNode | null | undefined } } | undefined;

/** The node's service as its dialog shows it while open, else as saved. */
function currentService(node: EditedNode): string {
  const field = $('#node-input-service');
  const id = field.length ? field.val() : node.service;
  return typeof id === 'string' ? id : '';
}

/**
 * Whether a config node says it does not declare `extension`: only a remote service whose extensions are
 * listed in its dialog. The built-in engine declares every one; a service asked at run time (the
 * default) answers then, where the client refuses what it does not declare.
 */
function serviceLacks(service: ServiceNode | null | undefined, extension: string): boolean {
  if (!service || service.mode !== 'remote' || service.extensions !== 'listed') return false;
  if (extension === 'output-encoding') return service.declaresOutputEncoding !== true;
  if (extension === 'loudness-only') return service.declaresLoudnessOnly !== true;
  if (extension === 'trim-pauses') return service.declaresTrimPauses !== true;
  if (extension === 'several-outputs') return service.declaresSeveralOutputs !== true;
  if (extension === 'dereverb') return service.declaresDereverb !== true;
  return true;
}

/**
 * `check`, and then, for a value that uses `extension` (one of `usedBy`; null: any value but empty and
 * false), that the node's service declares it: else Node-RED marks the node invalid, and its deploy
 * warning names the setting, the extension and the service, before the runtime refuses the message.
 */
export function declaredExtension(check: Validator, extension: string, usedBy: readonly string[] | null): Validator {
  return function (this: EditedNode, value: FieldValue, opt: unknown): Verdict {
    const verdict = check.call(this, value, opt);
    if (verdict !== true) return verdict;
    const used = usedBy === null ? value !== false && textOf(value) !== '' : usedBy.indexOf(textOf(value)) !== -1;
    if (!used || typeof RED === 'undefined') return true;
    const service = RED.nodes.node(currentService(this));
    if (!service || !serviceLacks(service, extension)) return true;
    const name =
      service.name ||
      String(service.baseUrl || '')
        .replace(/^https?:\/\//, '')
        .replace(/\/.*$/, '');
    return withReason(function () {
      return `uses the "${extension}" extension, which the service "${name}" does not declare (tick it in the service's Extensions if it does, or leave the setting empty)`;
    }).call(this, value, opt);
  };
}

/**
 * A rule of settings that cannot apply together (the contract's REQUEST_RULES, by the dialog's
 * properties): a value of one of `props` that asks for something, while `whenProp` holds one of `whenValues`.
 */
export interface TogetherRule {
  props: readonly string[];
  whenProp: string;
  whenValues: readonly string[];
  /** Values that ask for nothing (a default), as the dialog holds them. */
  asksNothing: readonly string[];
  /** The contract's rule, as the reason says it. */
  msg: string;
}

/**
 * `check`, then the rules of settings that cannot apply together for `prop`, read against the dialog's
 * other setting while it is open (else the node's saved one): the reason is the contract's, so the dialog
 * refuses what the runtime and the service would.
 */
export function together(check: Validator, prop: string, rules: readonly TogetherRule[]): Validator {
  return function (this: EditedNode, value: FieldValue, opt: unknown): Verdict {
    const verdict = check.call(this, value, opt);
    if (verdict !== true) return verdict;
    const text = textOf(value);
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i];
      if (rule.props.indexOf(prop) === -1 || text === '' || rule.asksNothing.indexOf(text) !== -1) continue;
      const field = $('#node-input-' + rule.whenProp);
      const other = textOf((field.length ? field.val() : this[rule.whenProp]) as FieldValue);
      if (rule.whenValues.indexOf(other) !== -1)
        return withReason(function () {
          return rule.msg;
        }).call(this, value, opt);
    }
    return true;
  };
}

/** What outputList checks a further output against: the contract's rules, as editor-values.ts gives them. */
export interface OutputRules {
  max: number;
  nameMaxLength: number;
  /** The name's regular expression, as its source. */
  namePattern: string;
  reserved: readonly string[];
  transcodeKinds: readonly string[];
  bitrateKbps: Bounds;
  bitrateModes: readonly string[];
  sampleRates: readonly string[];
  /** The words a file-name pattern may hold in braces. */
  placeholders: readonly string[];
}

/**
 * Enhance file's further outputs (a list the dialog saves, one object per row): at most `rules.max`, each
 * named uniquely by the contract's rule, its format and encoding within the contract's choices and bounds
 * (none of them for a WAV), and its file-name pattern a file name with known placeholders; and a service
 * that declares the several-outputs extension. The reason names the row (the first row is the node's own
 * output, set above the list), the member, the value and the rule.
 */
export function outputList(rules: OutputRules): Validator {
  return function (this: EditedNode, value: FieldValue, opt: unknown): Verdict {
    const label = opt && typeof (opt as { label?: unknown }).label === 'string' ? (opt as { label: string }).label : '';
    const say = (text: string) => (label ? label + ': ' : '') + text;
    const rows = value as unknown as Record<string, unknown>[] | undefined;
    if (rows === undefined || rows === null || (rows as unknown as string) === '') return true;
    if (!Array.isArray(rows)) return say('a list of outputs');
    if (rows.length > rules.max) return say(`at most ${rules.max} further outputs (got ${rows.length})`);
    const seen: string[] = [];
    // As the runtime checks it (output-list.ts checkDistinctNames): into a folder, a pattern without a
    // placeholder is one file's name, which no other file of the message may have.
    const toFile = this.output !== 'buffer';
    const ownName = textOf(this.fileName as FieldValue).trim();
    const namedFiles: string[] = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] || {};
      const where = `row ${i + 2}`;
      const bad = (member: string, got: unknown, rule: string) =>
        say(`${where}, ${member}: ${rule} (${valueShown(got as FieldValue)})`);
      const name = textOf(row.name as FieldValue);
      if (name.length < 1 || name.length > rules.nameMaxLength || !new RegExp(rules.namePattern).test(name))
        return bad(
          'name',
          row.name,
          `1 to ${rules.nameMaxLength} characters of a-z, 0-9, _ and -, starting with a letter or digit`,
        );
      if (rules.reserved.indexOf(name) !== -1)
        return bad('name', row.name, `not ${rules.reserved.join(' or ')}, the names of the service's own files`);
      if (seen.indexOf(name) !== -1) return bad('name', row.name, 'a name no other row has');
      seen.push(name);
      const transcode = textOf(row.transcode as FieldValue);
      if (transcode !== '' && rules.transcodeKinds.indexOf(transcode) === -1)
        return bad('format', row.transcode, `one of ${rules.transcodeKinds.join(', ')}, or empty for the input's`);
      const bitrate = textOf(row.bitrate_kbps as FieldValue);
      const kbps = Number(bitrate);
      if (bitrate !== '' && !(/^\d+$/.test(bitrate) && kbps >= rules.bitrateKbps.min && kbps <= rules.bitrateKbps.max))
        return bad(
          'bitrate',
          row.bitrate_kbps,
          `a whole number from ${rules.bitrateKbps.min} to ${rules.bitrateKbps.max}, or empty for the input's`,
        );
      const mode = textOf(row.bitrate_mode as FieldValue);
      if (mode !== '' && rules.bitrateModes.indexOf(mode) === -1)
        return bad('bitrate mode', row.bitrate_mode, `one of ${rules.bitrateModes.join(', ')}, or empty`);
      const rate = textOf(row.sample_rate_hz as FieldValue);
      if (rate !== '' && rules.sampleRates.indexOf(rate) === -1)
        return bad('sample rate', row.sample_rate_hz, `one of ${rules.sampleRates.join(', ')}, or empty`);
      const mono = row.downmix_mono === true;
      if (transcode === 'WAV' && (bitrate !== '' || mode !== '' || rate !== '' || mono))
        return bad('format', transcode, 'a WAV keeps every sample: leave its bitrate, mode, rate and mono empty');
      const pattern = textOf(row.file_name as FieldValue);
      const words = pattern.match(/\{[^}]*\}/g) || [];
      for (let w = 0; w < words.length; w++) {
        if (rules.placeholders.indexOf(words[w].slice(1, -1)) === -1)
          return bad(
            'file name',
            row.file_name,
            `placeholders ${rules.placeholders.map((word) => '{' + word + '}').join(', ')} only`,
          );
      }
      // As the runtime checks it (output-list.ts patternProblem): each placeholder filled in with "x", a
      // plain file name of at most 255 bytes.
      const filled = pattern.trim().replace(/\{(stem|name|ext)\}/g, 'x');
      // eslint-disable-next-line no-control-regex -- control characters are what this check refuses
      const control = /[\u0000-\u001f\u007f-\u009f]/.test(filled);
      if (filled !== '' && (/[/\\]/.test(filled) || filled === '.' || filled === '..' || control))
        return bad('file name', row.file_name, 'a file name without a folder part or control character');
      const bytes = encodeURIComponent(filled).replace(/%[0-9A-F]{2}/g, 'x').length;
      if (bytes > 255)
        return bad(
          'file name',
          row.file_name,
          `a file name of at most 255 bytes in UTF-8, placeholders counted as one`,
        );
      // Folded as macOS's and Windows' file systems compare names (as the runtime's check does).
      const literal = pattern.trim().normalize('NFC').toLowerCase();
      if (toFile && literal !== '' && !/\{(stem|name|ext)\}/.test(literal)) {
        if (literal === ownName.normalize('NFC').toLowerCase())
          return bad('file name', row.file_name, "a name other than the node's file name: two files cannot share one");
        if (namedFiles.indexOf(literal) !== -1)
          return bad('file name', row.file_name, 'a name no other row has: two files cannot share one');
        namedFiles.push(literal);
      }
    }
    if (rows.length === 0 || typeof RED === 'undefined') return true;
    const service = RED.nodes.node(currentService(this));
    if (!service || !serviceLacks(service, 'several-outputs')) return true;
    const serviceName = service.name || String(service.baseUrl || '');
    return say(
      `uses the "several-outputs" extension, which the service "${serviceName}" does not declare (tick it in the service's Extensions if it does, or remove the rows)`,
    );
  };
}

/**
 * The download node's named outputs (while its Files setting is "named"): names separated by commas or
 * spaces, each `enhanced` (the enhanced file) or a further output's name by the contract's rule.
 */
export function outputNamesFor(rules: OutputRules): Validator {
  return withReason(function (value) {
    const files = $('#node-input-files');
    const choice = files.length ? files.val() : this.files;
    if (choice !== 'named') return true;
    const names = textOf(value)
      .split(/[\s,]+/)
      .filter(function (name) {
        return name !== '';
      });
    if (names.length === 0) return "at least one output: enhanced, or a further output's name";
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      const further = name.length <= rules.nameMaxLength && new RegExp(rules.namePattern).test(name);
      if (name !== 'enhanced' && (!further || rules.reserved.indexOf(name) !== -1))
        return `"${name}" is not an output's name: enhanced, or 1 to ${rules.nameMaxLength} characters of a-z, 0-9, _ and -, other than ${rules.reserved.filter((word) => word !== 'enhanced').join(' or ')}`;
    }
    return true;
  });
}

/** The checks the editor script offers, each as MediaEnhanceEditor.<its name>. */
export const VALIDATORS = [
  numberIn,
  together,
  integerOrEmpty,
  numberOrDefault,
  trimPausesOrEmpty,
  booleanOrEmpty,
  positiveIntegerOrEmpty,
  secondsOrEmpty,
  settleSecondsOrEmpty,
  crossfadeSecondsOrEmpty,
  filePathOrEmpty,
  oneOf,
  either,
  folderForFiles,
  fileNameOrEmpty,
  redisUrlOrEmpty,
  declaredExtension,
  outputList,
  outputNamesFor,
];

/** What the checks call, copied into the editor script beside them. */
export const VALIDATOR_HELPERS = [
  withReason,
  valueShown,
  textOf,
  secondsOrEmptyFrom,
  currentOutput,
  currentService,
  serviceLacks,
];
