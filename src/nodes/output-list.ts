// Enhance file's further outputs: the files a job writes beside the first (the enhanced file, shaped by the
// node's own format and encoding settings), each with a name, a format, a lossy encoding and a file-name
// pattern. The node's list (the dialog's rows after the first) or msg.outputs (the same shape) gives them;
// they go to the service as `media_enhancement.outputs` (the built-in engine's several-outputs extension)
// and come back as named steps of the same media. The members are checked by the contract's own rules,
// and an error names the row or msg.outputs entry the bad value came from.
import { extname } from 'node:path';
import { stemOf } from '../contract/attachment';
import type { FieldIssue } from '../contract/field-issue';
import { appliedOutputsOf, checkEnhancementSettings } from '../contract/fields';
import { fileNameProblem } from './file-output';
import { fieldName, issuesError, inputError, type InputField } from './input-error';
import type { NodeDef, NodeMessage } from './red';
import type { Translate } from './texts';

/** The name the first file goes by in msg.files and msg.output (the interface's ENHANCED step). */
export const FIRST_OUTPUT_NAME = 'enhanced';

/** A further output as the request carries it (`media_enhancement.outputs[i]`). */
export type RequestOutput = Record<string, unknown> & { name: string };

export interface FurtherOutputs {
  /** The request's `outputs`, in order; empty when there are none. */
  request: RequestOutput[];
  /** Each output's file-name pattern ({stem}, {name}, {ext}); undefined: as the service names it. */
  patterns: (string | undefined)[];
  /** Where they came from, for errors that name them. */
  from: 'msg.outputs' | 'setting';
}

/** The members a row holds that are numbers in the request (the editor saves every field as text). */
const NUMERIC = new Set(['bitrate_kbps', 'sample_rate_hz']);
/** The node's own member: where the file goes; never sent. */
const PATTERN = 'file_name';
/** What a file-name pattern may name in braces: the uploaded file's stem, the output's name, its extension. */
export const PATTERN_PLACEHOLDERS = ['stem', 'name', 'ext'] as const;

/**
 * The message's further outputs: msg.outputs when the message has one (an empty list: the first file
 * only), else the node's list. Empty dialog fields are left out (the service's default), so a row is the
 * request member it shows; each is checked by the contract (names, formats, bounds, the lossless rule)
 * against the message's enhancement, and its file-name pattern here.
 */
export function readFurtherOutputs(t: Translate, def: NodeDef, msg: NodeMessage): FurtherOutputs {
  const fromMessage = msg.outputs !== undefined;
  const given: unknown = fromMessage ? msg.outputs : (def.furtherOutputs ?? []);
  const from = fromMessage ? 'msg.outputs' : 'setting';
  const listField: InputField = fromMessage ? 'msg.outputs' : outputsSetting(t);
  if (!Array.isArray(given)) throw inputError(t, listField, given, t('media-enhance-file.rule.outputList'));
  const request: RequestOutput[] = [];
  const patterns: (string | undefined)[] = [];
  given.forEach((row: unknown, index) => {
    if (typeof row !== 'object' || row === null || Array.isArray(row))
      throw inputError(t, entryField(t, from, index), row, t('media-enhance-file.rule.outputEntry'));
    const output: Record<string, unknown> = {};
    let pattern: string | undefined;
    for (const [member, raw] of Object.entries(row as Record<string, unknown>)) {
      const value = typeof raw === 'string' && member !== 'name' && member !== PATTERN ? raw.trim() : raw;
      // An empty field, or an unticked mono, takes the service's default.
      if (value === undefined || value === null || value === '' || (member === 'downmix_mono' && value === false))
        continue;
      if (member === PATTERN) {
        // A blank pattern is an empty field: the service's name.
        if (typeof value !== 'string') pattern = value as string;
        else if (value.trim() !== '') pattern = value.trim();
        continue;
      }
      output[member] = NUMERIC.has(member) && typeof value === 'string' && value !== '' ? numberOr(value) : value;
    }
    request.push(output as RequestOutput);
    patterns.push(pattern);
  });
  return { request, patterns, from };
}

/** Throws the first problem of the outputs with the message's enhancement: the contract's, then each pattern's. */
export function checkFurtherOutputs(t: Translate, outputs: FurtherOutputs, enhancement: Record<string, unknown>): void {
  if (outputs.request.length === 0) return;
  const issues = checkEnhancementSettings({ ...enhancement, outputs: outputs.request }, 'media_enhancement').filter(
    (issue) => issue.loc[2] === 'outputs',
  );
  if (issues.length > 0) throw issuesError(t, issues, (loc) => issueField(t, outputs.from, loc));
  outputs.patterns.forEach((pattern, index) => {
    if (pattern === undefined) return;
    if (typeof pattern !== 'string')
      throw inputError(t, patternField(t, outputs.from, index), pattern, t('media-enhance-file.rule.pattern'));
    const problem = patternProblem(t, pattern);
    if (problem !== undefined) throw inputError(t, patternField(t, outputs.from, index), pattern, problem);
  });
}

/** A name the node gives one of a message's files in the folder ('': the service's), and the field it comes from. */
export interface ChosenName {
  name: string;
  /** None for a name the service gives. */
  field?: InputField;
}

/**
 * Throws when two files of one message would get one name in the folder: the later would replace the
 * earlier ("overwrite"), fail after it ("error") or be numbered beside it, and msg.files would not tell
 * which is which. The error names both fields and the name. Names left to the service are its own.
 */
export function checkDistinctNames(t: Translate, chosen: readonly ChosenName[]): void {
  const taken = new Map<string, InputField>();
  for (const { name, field } of chosen) {
    if (name === '' || field === undefined) continue;
    // Folded as macOS's and Windows' file systems compare names: `Ep.wav` and `ep.wav` are one file there.
    const key = name.normalize('NFC').toLowerCase();
    const earlier = taken.get(key);
    if (earlier === undefined) {
      taken.set(key, field);
      continue;
    }
    const rule = t('media-enhance-file.rule.sameFileName', { other: fieldName(t, earlier) });
    throw inputError(t, field, name, rule, [earlier]);
  }
}

/**
 * The names known before anything is sent: the first file's, and each further output's pattern that has
 * no placeholder (one with placeholders is filled in from the media, and checked again then).
 */
export function namesBeforeUpload(t: Translate, first: ChosenName, outputs: FurtherOutputs): ChosenName[] {
  const literal = outputs.patterns.flatMap((pattern, index) =>
    typeof pattern === 'string' && !PLACEHOLDER.test(pattern)
      ? [{ name: pattern, field: patternField(t, outputs.from, index) }]
      : [],
  );
  return [first, ...literal];
}

/**
 * Why a file-name pattern cannot name a file (the rule), or undefined: placeholders among {stem},
 * {name} and {ext}, and with each filled in, a plain file name (file-output.ts).
 */
export function patternProblem(t: Translate, pattern: string): string | undefined {
  const unknown = [...pattern.matchAll(/\{([^}]*)\}/g)]
    .map((match) => match[1])
    .filter((word) => !(PATTERN_PLACEHOLDERS as readonly string[]).includes(word));
  if (unknown.length > 0)
    return t('media-enhance-file.rule.patternPlaceholder', {
      placeholders: PATTERN_PLACEHOLDERS.map((word) => `{${word}}`).join(', '),
    });
  return fileNameProblem(t, fillPattern(pattern, { stem: 'x', name: 'x', ext: 'x' }));
}

/** A placeholder a pattern's name is filled in from. */
const PLACEHOLDER = /\{(stem|name|ext)\}/;

/** The pattern with its placeholders filled in. */
export function fillPattern(pattern: string, values: Record<(typeof PATTERN_PLACEHOLDERS)[number], string>): string {
  return pattern.replace(new RegExp(PLACEHOLDER, 'g'), (_whole, word: keyof typeof values) => values[word]);
}

function numberOr(text: string): unknown {
  const number = Number(text);
  return Number.isFinite(number) ? number : text;
}

/** Where the list came from, as an error names it. */
export function outputsField(t: Translate, from: FurtherOutputs['from']): InputField {
  return from === 'msg.outputs' ? 'msg.outputs' : outputsSetting(t);
}

function outputsSetting(t: Translate): InputField {
  return { prop: 'furtherOutputs', label: t('media-enhance-file.label.furtherOutputs') };
}

/**
 * An entry of the list by where it came from: `msg.outputs[1].name`, or the dialog's row (the first row
 * is the node's own output, so the list's first entry is row 2).
 */
function entryField(t: Translate, from: FurtherOutputs['from'], index: number, member?: string): InputField {
  if (from === 'msg.outputs') return `msg.outputs[${index}]${member ? `.${member}` : ''}`;
  return {
    prop: 'furtherOutputs',
    label: t('media-enhance-file.label.outputRow', { row: index + 2, member: member ?? '' }).trim(),
  };
}

/** Where an output's file-name pattern came from. */
export function patternField(t: Translate, from: FurtherOutputs['from'], index: number): InputField {
  return entryField(t, from, index, PATTERN);
}

function issueField(t: Translate, from: FurtherOutputs['from'], loc: FieldIssue['loc']): InputField {
  const [, , , index, member] = loc;
  if (typeof index !== 'number') return from === 'msg.outputs' ? 'msg.outputs' : outputsSetting(t);
  return entryField(t, from, index, typeof member === 'string' ? member : undefined);
}

/**
 * A further output's file name in the folder: its pattern filled in from the media (the stem of the name
 * it was uploaded as, as the service takes it; the extension of the file the service made), or '' to take the service's name,
 * `<stem>_<name>.<ext>`. The filled name is checked again: the stem and extension come from the media
 * (an upload named `...` gives the stem `..`), so a name that would leave the folder, hold a control
 * character or pass 255 bytes fails the message, naming the pattern's field, the name and the rule.
 */
export function patternedName(
  t: Translate,
  outputs: Pick<FurtherOutputs, 'patterns' | 'from'>,
  index: number,
  name: string,
  media: { file_name?: string; enhancement_params?: Record<string, unknown> },
): string {
  const pattern = outputs.patterns[index];
  if (pattern === undefined) return '';
  const made = appliedOutputsOf(media).find((output) => output.name === name)?.file_name ?? '';
  const ext = extname(made).slice(1);
  const filled = fillPattern(pattern, { stem: stemOf(media.file_name ?? ''), name, ext });
  const problem = fileNameProblem(t, filled);
  if (problem !== undefined) throw inputError(t, patternField(t, outputs.from, index), filled, problem);
  return filled;
}
