// Where a node puts a media's file: into a folder (written atomically by the client: a temporary file
// put in place when complete, never over another file unless the node says "overwrite") or into
// msg.payload as a Buffer. Shared by download and enhance file.
import { constants, promises as fsp } from 'node:fs';
import { dirname, join } from 'node:path';
import type { MediaEnhanceClient } from '../client/client';
import type { DownloadOptions } from '../client/download';
import { bearsStamp, type FileStamp } from '../client/file-stamp';
import { DEFAULT_IF_EXISTS, IF_EXISTS, type IfExists } from '../client/final-name';
import { resumablePartPath } from '../client/part-file';
import { MAX_FILE_NAME_BYTES } from '../client/safe-file-name';
import { fileError, MediaEnhanceError } from '../client/errors';
import type { DownloadStep } from '../contract/fields';
import type { Job } from './message-jobs';
import { inputError, type InputField } from './input-error';
import { resolvePath } from './msg-inputs';
import type { NodeDef, NodeMessage } from './red';
import type { Translate } from './texts';

/** A node's "output" settings: into a folder (named, or as the service names it) or a Buffer. */
export interface FileOutput {
  toFile: boolean;
  folder: string;
  name: string;
  /** When a file of the output's name exists: a numbered name (default), an error, or overwrite it. */
  ifExists: IfExists;
}

export function readFileOutput(def: NodeDef): FileOutput {
  return {
    toFile: def.output !== 'buffer',
    folder: typeof def.folder === 'string' ? def.folder.trim() : '',
    name: typeof def.fileName === 'string' ? def.fileName.trim() : '',
    // A node saved before the setting existed never replaces a file either.
    ifExists: (def.ifExists === undefined || def.ifExists === '' ? DEFAULT_IF_EXISTS : def.ifExists) as IfExists,
  };
}

/** Throws the setting that cannot work: a file output without a folder, a name that cannot be one, an unknown choice. */
export function checkFileOutput(t: Translate, { toFile, folder, name, ifExists }: FileOutput, def: NodeDef): void {
  if (toFile && folder === '') {
    const setting = { prop: 'folder', label: t('media-enhance.setting.folder') };
    throw inputError(t, setting, def.folder, t('media-enhance.rule.folderRequired'));
  }
  const problem = name === '' ? undefined : fileNameProblem(t, name);
  if (problem !== undefined) {
    const setting = { prop: 'fileName', label: t('media-enhance.setting.fileName') };
    throw inputError(t, setting, def.fileName, problem);
  }
  if (!(IF_EXISTS as readonly string[]).includes(ifExists)) {
    const setting = { prop: 'ifExists', label: t('media-enhance.setting.ifExists') };
    throw inputError(t, setting, def.ifExists, t('media-enhance.rule.oneOf', { values: IF_EXISTS.join(', ') }));
  }
}

/** `msg.ifExists` for this message, else the node's setting. */
export function readIfExists(t: Translate, msg: NodeMessage, configured: IfExists): IfExists {
  if (msg.ifExists === undefined) return configured;
  if (typeof msg.ifExists !== 'string' || !(IF_EXISTS as readonly string[]).includes(msg.ifExists))
    throw inputError(t, 'msg.ifExists', msg.ifExists, t('media-enhance.rule.oneOf', { values: IF_EXISTS.join(', ') }));
  return msg.ifExists as IfExists;
}

/** A name for a file inside the folder: no folder part, nothing hidden behind "." or "..". */
export function isPlainFileName(name: string): boolean {
  return fileNameProblem(undefined, name) === undefined;
}

/**
 * Why `name` cannot name a file in the folder (the rule, in the user's words), or undefined when it can:
 * a folder part or "." / "..", a control character (a newline in a name breaks every tool that lists
 * it), more bytes than a file system takes (255 in UTF-8: 200 × "é" is 400).
 */
export function fileNameProblem(
  t: Translate | undefined,
  name: string,
  folderRule = 'media-enhance.rule.plainFileName',
): string | undefined {
  const say = (key: string, values?: Record<string, string | number>) => (t ? t(key, values) : key);
  if (name.trim().length === 0 || /[/\\\0]/.test(name) || name.trim() === '.' || name.trim() === '..')
    return say(folderRule);
  // eslint-disable-next-line no-control-regex -- control characters are what this rule refuses
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return say('media-enhance.rule.fileNameControl');
  const bytes = Buffer.byteLength(name);
  if (bytes > MAX_FILE_NAME_BYTES)
    return say('media-enhance.rule.fileNameTooLong', { max: MAX_FILE_NAME_BYTES, bytes, characters: [...name].length });
  return undefined;
}

/**
 * Before anything is sent: a named output that cannot be written is refused now, not after the upload,
 * the processing and the download. A name that is an existing folder; with `error`, a name taken; with
 * `overwrite`, the input file itself. `field` is where the name came from (msg.outputFilename or the setting).
 */
export async function checkOutputTarget(
  t: Translate,
  place: { folder: string; name: string; ifExists: IfExists; workingDirectory?: string; input?: string },
  field: InputField,
): Promise<void> {
  const dir = resolvePath(place.folder, place.workingDirectory);
  await checkOutputFolder(t, place.folder, dir);
  if (!place.name) return;
  const target = join(dir, place.name);
  const existing = await fsp.stat(target).catch(() => undefined);
  if (!existing) return;
  if (existing.isDirectory())
    throw inputError(t, field, place.name, t('media-enhance.rule.nameIsFolder', { path: target }));
  if (place.ifExists === 'error')
    throw new MediaEnhanceError('FILE', t('media-enhance.error.fileExists', { path: target }));
  if (place.ifExists === 'overwrite' && place.input !== undefined) {
    const input = await fsp.stat(place.input).catch(() => undefined);
    if (input && input.dev === existing.dev && input.ino === existing.ino)
      throw new MediaEnhanceError('FILE', t('media-enhance.error.isTheInput', { path: target }));
  }
}

/**
 * The output folder, before anything is sent: it exists or can be made (the nearest folder that exists
 * on its path is a folder, not a file), and Node-RED can write into it. Otherwise the setting, its value
 * and the rule, so a message is not processed for minutes only to fail at the last step.
 */
async function checkOutputFolder(t: Translate, setting: string, dir: string): Promise<void> {
  const field = { prop: 'folder', label: t('media-enhance.setting.folder') };
  let existing = dir;
  let stat = await fsp.stat(existing).catch((err: NodeJS.ErrnoException) => err);
  // Up to the nearest part of the path that exists (ENOTDIR: a part of it is a file, found on the way up).
  while (
    stat instanceof Error &&
    (stat.code === 'ENOENT' || stat.code === 'ENOTDIR') &&
    dirname(existing) !== existing
  ) {
    existing = dirname(existing);
    stat = await fsp.stat(existing).catch((err: NodeJS.ErrnoException) => err);
  }
  const refuse = (reason: string, values: Record<string, string>) =>
    inputError(t, field, setting, t('media-enhance.rule.writableFolder', { reason: t(reason, values) }));
  if (stat instanceof Error)
    throw refuse('media-enhance.rule.folderUnreadable', { path: existing, error: stat.message });
  if (!stat.isDirectory()) throw refuse('media-enhance.rule.folderIsAFile', { path: existing });
  const writable = await fsp.access(existing, constants.W_OK | constants.X_OK).then(
    () => true,
    () => false,
  );
  if (!writable) throw refuse('media-enhance.rule.folderNotWritable', { path: existing });
}

export async function downloadAsBuffer(
  client: MediaEnhanceClient,
  uid: string,
  step: DownloadStep,
  job: Job,
): Promise<{ payload: Buffer; contentType: string; fileName: string }> {
  const onProgress = job.progress('downloading');
  const file = await client.downloadFile(uid, { step, signal: job.signal, onWait: job.onWait });
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of file.stream) {
    chunks.push(chunk as Buffer);
    received += (chunk as Buffer).length;
    onProgress(received, file.size);
  }
  return { payload: Buffer.concat(chunks, received), contentType: file.contentType, fileName: file.fileName };
}

/**
 * Into `folder` (relative to Node-RED's working folder), named `name` or as the service names it.
 * `keepPart`: the download is resumable (a stop keeps its part file, and the message's next run continues
 * from it); it is told the part's path first, so whoever keeps the message can remove the part with it.
 */
export async function downloadIntoFolder(
  client: MediaEnhanceClient,
  uid: string,
  step: DownloadStep,
  job: Job,
  place: {
    folder: string;
    name: string;
    ifExists: IfExists;
    /** The file being processed: never replaced, whatever `ifExists` says. */
    input?: string;
    workingDirectory?: string;
    keepPart?: (path: string) => Promise<void>;
    /** Told where the complete file goes and its stamp just before it is put there (the client's `beforePlace`). */
    beforePlace?: DownloadOptions['beforePlace'];
  },
): Promise<{ path: string; contentType: string; fileName: string }> {
  const dir = resolvePath(place.folder, place.workingDirectory);
  await fsp.mkdir(dir, { recursive: true }).catch((err: unknown) => {
    throw fileError(err, `creating the folder ${dir}`, uid);
  });
  const target = downloadTarget(place);
  await place.keepPart?.(await resumablePartPath(target, uid, step));
  const written = await client.downloadToFile(uid, target, {
    step,
    ifExists: place.ifExists,
    neverReplace: place.input === undefined ? [] : [place.input],
    beforePlace: place.beforePlace,
    resumable: place.keepPart !== undefined,
    signal: job.signal,
    onWait: job.onWait,
    onProgress: job.progress('downloading'),
  });
  return { path: written.path, contentType: written.contentType, fileName: written.fileName };
}

/** What a download into the folder is given as its target: the named file, or the folder for the service's name. */
function downloadTarget(place: { folder: string; name: string; workingDirectory?: string }): string {
  const dir = resolvePath(place.folder, place.workingDirectory);
  return place.name ? join(dir, place.name) : dir;
}

/**
 * Removes the part file a resumable download of this file kept, when it is still a second name of the
 * file put in place from it (`placed`): a crash came between the two, and the part is no longer needed.
 */
export async function removeLinkedPart(
  place: { folder: string; name: string; workingDirectory?: string },
  uid: string,
  step: DownloadStep,
  placed: FileStamp,
): Promise<void> {
  const part = await resumablePartPath(downloadTarget(place), uid, step);
  if (await bearsStamp(part, placed)) await fsp.rm(part, { force: true });
}
