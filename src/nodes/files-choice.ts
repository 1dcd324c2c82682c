// The download node's "Files": the file of the chosen step (as it always was), every output the media
// has (the enhanced file and each further output its metadata lists), or the outputs named in the node
// or in msg.outputNames; and "Send", one message with every file or one per file (files-message.ts).
import { isFurtherOutputName } from '../contract/fields';
import { inputError } from './input-error';
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
    const listed: unknown[] = typeof given === 'string' ? namesIn(given) : given;
    if (listed.length === 0)
      throw inputError(t, 'msg.outputNames', given, t('media-enhance-download.rule.outputNames'));
    listed.forEach((name: unknown, index) => {
      if (!isOutputName(name))
        throw inputError(t, `msg.outputNames[${index}]`, name, t('media-enhance-download.rule.outputName'));
    });
    return { files: 'named', names: unique(listed as string[]), send: readSendFiles(t, def) };
  }
  if (choice === 'step') return { files: 'step' };
  const send = readSendFiles(t, def);
  if (choice === 'all') return { files: 'all', send };
  const names = namesIn(typeof def.outputNames === 'string' ? def.outputNames : '');
  const setting = { prop: 'outputNames', label: t('media-enhance-download.label.outputNames') };
  if (names.length === 0) throw inputError(t, setting, def.outputNames, t('media-enhance-download.rule.outputNames'));
  const bad = names.find((name) => !isOutputName(name));
  if (bad !== undefined) throw inputError(t, setting, bad, t('media-enhance-download.rule.outputName'));
  return { files: 'named', names: unique(names), send };
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
