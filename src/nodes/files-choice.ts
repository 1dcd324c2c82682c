// The download node's "Files": the file of the chosen step (as it always was), every output the media
// has (the enhanced file and each further output its metadata lists), or the outputs named in the node
// or in msg.outputs; and "Send", one message with every file or one per file (files-message.ts).
import { OUTPUT_NAME } from '../contract/fields';
import { inputError } from './input-error';
import { readSendFiles, type SendFiles } from './files-message';
import type { NodeDef, NodeMessage } from './red';
import type { Translate } from './texts';

export const FILES_CHOICES = ['step', 'all', 'named'] as const;
export type FilesChoice = (typeof FILES_CHOICES)[number];
/** A node saved before the setting existed downloads the file of its step, as it always did. */
export const DEFAULT_FILES_CHOICE: FilesChoice = 'step';

export type FilesWanted =
  { files: 'step' } | { files: 'all'; send: SendFiles } | { files: 'named'; names: string[]; send: SendFiles };

/**
 * What the message asks for: msg.outputs (a list of names, or of outputs with a `name`, as enhance file
 * takes them) names the files; otherwise the node's choice. A bad value names its field and the rule.
 */
export function readFilesChoice(t: Translate, def: NodeDef, msg: NodeMessage): FilesWanted {
  const choice = def.files === undefined || def.files === '' ? DEFAULT_FILES_CHOICE : def.files;
  if (!(FILES_CHOICES as readonly unknown[]).includes(choice)) {
    const setting = { prop: 'files', label: t('media-enhance-download.label.files') };
    throw inputError(t, setting, def.files, t('media-enhance.rule.oneOf', { values: FILES_CHOICES.join(', ') }));
  }
  if (msg.outputs !== undefined) {
    const given: unknown = msg.outputs;
    if (!Array.isArray(given) || given.length === 0)
      throw inputError(t, 'msg.outputs', given, t('media-enhance-download.rule.outputNames'));
    const names = given.map((entry: unknown, index) => {
      const name = typeof entry === 'object' && entry !== null ? (entry as { name?: unknown }).name : entry;
      if (typeof name !== 'string' || !isOutputName(name))
        throw inputError(t, `msg.outputs[${index}]`, entry, t('media-enhance-download.rule.outputName'));
      return name;
    });
    return { files: 'named', names: unique(names), send: readSendFiles(t, def) };
  }
  if (choice === 'step') return { files: 'step' };
  const send = readSendFiles(t, def);
  if (choice === 'all') return { files: 'all', send };
  const text = typeof def.outputNames === 'string' ? def.outputNames : '';
  const names = text
    .split(/[\s,]+/)
    .map((name) => name.trim())
    .filter(Boolean);
  const setting = { prop: 'outputNames', label: t('media-enhance-download.label.outputNames') };
  if (names.length === 0) throw inputError(t, setting, def.outputNames, t('media-enhance-download.rule.outputNames'));
  const bad = names.find((name) => !isOutputName(name));
  if (bad !== undefined) throw inputError(t, setting, bad, t('media-enhance-download.rule.outputName'));
  return { files: 'named', names: unique(names), send };
}

/** An output's name as the service takes it (the several-outputs extension), or `enhanced` for the enhanced file. */
function isOutputName(name: string): boolean {
  return name.length <= OUTPUT_NAME.maxLength && OUTPUT_NAME.pattern.test(name);
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}
