// The download node's "Files": the file of the chosen step (as it always was), every output the media
// has (the enhanced file and each further output its metadata lists), or the outputs named in the node
// or in msg.outputNames; and "Send", one message with every file or one per file (files-message.ts).
import { isFurtherOutputName } from '../contract/fields';
import { inputError, type InputField } from './input-error';
import { readSendFiles, type SendFiles } from './files-message';
import { FIRST_OUTPUT_NAME } from './output-list';
import type { NodeDef, NodeMessage } from './red';
import type { Translate } from './texts';

export const FILES_CHOICES = ['step', 'all', 'named'] as const;
export type FilesChoice = (typeof FILES_CHOICES)[number];
/** A node saved before the setting existed downloads the file of its step, as it always did. */
export const DEFAULT_FILES_CHOICE: FilesChoice = 'step';

export type FilesWanted =
  { files: 'step' } | { files: 'all'; send: SendFiles } | { files: 'named'; names: string[]; send: SendFiles };

/**
 * What the message asks for: msg.outputNames (the names, as a list or as text like the node's own
 * *Outputs*) names the files; absent or empty, the node's choice. It is the download node's own property,
 * so a message from enhance file, which carries that node's msg.outputs, does not change what this node
 * fetches. A bad value names its field and the rule.
 */
export function readFilesChoice(t: Translate, def: NodeDef, msg: NodeMessage): FilesWanted {
  const choice = def.files === undefined || def.files === '' ? DEFAULT_FILES_CHOICE : def.files;
  if (!(FILES_CHOICES as readonly unknown[]).includes(choice)) {
    const setting = { prop: 'files', label: t('media-enhance-download.label.files') };
    throw inputError(t, setting, def.files, t('media-enhance.rule.oneOf', { values: FILES_CHOICES.join(', ') }));
  }
  const given: unknown = msg.outputNames;
  if (given !== undefined && given !== '' && !(Array.isArray(given) && given.length === 0)) {
    if (!Array.isArray(given) && typeof given !== 'string')
      throw inputError(t, 'msg.outputNames', given, t('media-enhance-download.rule.outputNames'));
    const names = namesChecked(t, typeof given === 'string' ? namesIn(given) : given, given, 'msg.outputNames');
    return { files: 'named', names, send: readSendFiles(t, def) };
  }
  if (choice === 'step') return { files: 'step' };
  const send = readSendFiles(t, def);
  if (choice === 'all') return { files: 'all', send };
  const setting = { prop: 'outputNames', label: t('media-enhance-download.label.outputNames') };
  const listed = namesIn(typeof def.outputNames === 'string' ? def.outputNames : '');
  const names = namesChecked(t, listed, def.outputNames, setting);
  return { files: 'named', names, send };
}

/**
 * The names to download, from msg.outputNames or the node's *Outputs* (`given`, as written, for the
 * error): at least one, each the enhanced file's or a further output's name, a name given twice once.
 * A bad name is named by its place in the list for a msg property, by the setting for the node's own.
 */
function namesChecked(t: Translate, listed: unknown[], given: unknown, field: InputField): string[] {
  if (listed.length === 0) throw inputError(t, field, given, t('media-enhance-download.rule.outputNames'));
  listed.forEach((name, index) => {
    if (!isOutputName(name)) {
      const at = typeof field === 'string' ? `${field}[${index}]` : field;
      throw inputError(t, at, name, t('media-enhance-download.rule.outputName'));
    }
  });
  return unique(listed as string[]);
}

/** The names in a text like `enhanced, master feed`. */
function namesIn(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((name) => name.trim())
    .filter(Boolean);
}

/** `enhanced` for the enhanced file, or a further output's name as the service takes it (never `pre`). */
function isOutputName(name: unknown): name is string {
  return name === FIRST_OUTPUT_NAME || isFurtherOutputName(name);
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}
