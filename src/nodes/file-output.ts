// Where a node puts a media's file: into a folder (written atomically by the client: a temporary file
// renamed when complete) or into msg.payload as a Buffer. Shared by download and enhance file.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { MediaEnhanceClient } from '../client/client';
import { resumablePartPath } from '../client/download';
import type { Step } from '../contract/fields';
import type { Job } from './message-jobs';
import { inputError } from './input-error';
import { resolvePath } from './msg-inputs';
import type { NodeDef } from './red';
import type { Translate } from './texts';

/** A node's "output" settings: into a folder (named, or as the service names it) or a Buffer. */
export interface FileOutput {
  toFile: boolean;
  folder: string;
  name: string;
}

export function readFileOutput(def: NodeDef): FileOutput {
  return {
    toFile: def.output !== 'buffer',
    folder: typeof def.folder === 'string' ? def.folder.trim() : '',
    name: typeof def.fileName === 'string' ? def.fileName.trim() : '',
  };
}

/** Throws the setting that cannot work: a file output without a folder, or a name with a folder part. */
export function checkFileOutput(t: Translate, { toFile, folder, name }: FileOutput, def: NodeDef): void {
  if (toFile && folder === '') {
    const setting = { prop: 'folder', label: t('media-enhance.setting.folder') };
    throw inputError(t, setting, def.folder, t('media-enhance.rule.folderRequired'));
  }
  if (name !== '' && !isPlainFileName(name)) {
    const setting = { prop: 'fileName', label: t('media-enhance.setting.fileName') };
    throw inputError(t, setting, def.fileName, t('media-enhance.rule.plainFileName'));
  }
}

/** A name for a file inside the folder: no folder part, nothing hidden behind "." or "..". */
export function isPlainFileName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && !/[/\\\0]/.test(name) && name !== '.' && name !== '..';
}

export async function downloadAsBuffer(
  client: MediaEnhanceClient,
  uid: string,
  step: Step,
  job: Job,
): Promise<{ payload: Buffer; contentType: string }> {
  const onProgress = job.progress('downloading');
  const file = await client.downloadFile(uid, { step, signal: job.signal, onWait: job.onWait });
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of file.stream) {
    chunks.push(chunk as Buffer);
    received += (chunk as Buffer).length;
    onProgress(received, file.size);
  }
  return { payload: Buffer.concat(chunks, received), contentType: file.contentType };
}

/**
 * Into `folder` (relative to Node-RED's working folder), named `name` or as the service names it.
 * `keepPart`: the download is resumable (a stop keeps its part file, and the message's next run continues
 * from it); it is told the part's path first, so whoever keeps the message can remove the part with it.
 */
export async function downloadIntoFolder(
  client: MediaEnhanceClient,
  uid: string,
  step: Step,
  job: Job,
  place: { folder: string; name: string; workingDirectory?: string; keepPart?: (path: string) => Promise<void> },
): Promise<{ path: string; contentType: string }> {
  const dir = resolvePath(place.folder, place.workingDirectory);
  await fsp.mkdir(dir, { recursive: true });
  const target = place.name ? join(dir, place.name) : dir;
  await place.keepPart?.(await resumablePartPath(target, uid, step));
  const written = await client.downloadToFile(uid, target, {
    step,
    resumable: place.keepPart !== undefined,
    signal: job.signal,
    onWait: job.onWait,
    onProgress: job.progress('downloading'),
  });
  return { path: written.path, contentType: written.contentType };
}
