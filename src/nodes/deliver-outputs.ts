// Enhance file's last step: each file a processed media gives (the enhanced file, then each further
// output) into the folder or as a Buffer, one after the other, the intro and outro joined onto each in
// its own encoding, the status saying which file it is at.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join as joinPath } from 'node:path';
import type { MediaEnhanceClient } from '../client/client';
import type { DownloadOptions } from '../client/download';
import { bearsStamp, stampOf, type FileStamp } from '../client/file-stamp';
import { findPlaced, type IfExists } from '../client/final-name';
import type { MediaMetadata } from '../client/types';
import { appliedOutputsOf, type DownloadStep } from '../contract/fields';
import { downloadAsBuffer, downloadIntoFolder, removeLinkedPart } from './file-output';
import { formatOf, type DeliveredFile } from './files-message';
import type { Job } from './message-jobs';
import { FIRST_OUTPUT_NAME, patternedName, patternField, type ChosenName, type FurtherOutputs } from './output-list';
import type { InputField } from './input-error';
import type { Translate } from './texts';

/**
 * One file to fetch: its output's name, the step the service serves it as, its name in the folder ('' :
 * the service's) and the field that name comes from, where the node chose it.
 */
export interface OutputToDeliver {
  name: string;
  step: DownloadStep;
  fileName: string;
  field?: InputField;
}

/** Where the files go: a folder (with the node's place settings) or Buffers. */
export interface DeliveryPlace {
  toFile: boolean;
  folder: string;
  ifExists: IfExists;
  /** The file being processed: never replaced. */
  input?: string;
  workingDirectory?: string;
  /** Keeps a download's part file with the message, so a restart continues it. */
  keepPart?: (path: string) => Promise<void>;
  /**
   * Keeps each file put in place with the message, so a restart does not fetch it again: once downloaded
   * (`joining` while its intro and outro are joined), again just before the joined file replaces it, and
   * once finished.
   */
  keepDelivered?: (file: KeptFile) => Promise<void>;
  /** The files an earlier run put in place for this message: handed on as they are while they are still there. */
  delivered?: readonly KeptFile[];
}

/** What the client tells just before it puts a downloaded file in place. */
type Placing = Parameters<NonNullable<DownloadOptions['beforePlace']>>[0];

/**
 * A delivered file as a kept message records it. `placing`: noted just before the download put it in
 * place (at `path` or a numbered name beside it), with the stamp a restart finds it by. `joining`: once
 * there, while the intro and outro are joined onto it (the joined file is a new one, renamed over it).
 */
export interface KeptFile extends DeliveredFile {
  placing?: FileStamp;
  joining?: FileStamp;
}

/** Joins the intro and outro onto the file at `path`, in place; `beforeReplace` is told what it did just before. */
export type JoinInPlace = (path: string, beforeReplace: (episode: unknown) => Promise<void>) => Promise<unknown>;

/**
 * The files a processed media gives, in order: the enhanced file under the node's name, then each further
 * output its metadata lists (not the list the message reads now: a message resumed after a redeploy that
 * changed the list still fetches what its media made), named by the pattern of the output of that name.
 */
export function outputsToDeliver(
  t: Translate,
  first: ChosenName,
  outputs: FurtherOutputs,
  media: MediaMetadata,
): OutputToDeliver[] {
  return [
    { name: FIRST_OUTPUT_NAME, step: 'ENHANCED', fileName: first.name, field: first.field },
    ...appliedOutputsOf(media).map(({ name }) => {
      const index = outputs.request.findIndex((wanted) => wanted.name === name);
      if (index < 0) return { name, step: name, fileName: '' };
      return {
        name,
        step: name,
        fileName: patternedName(t, outputs, index, name, media),
        field: patternField(t, outputs.from, index),
      };
    }),
  ];
}

/**
 * Fetches each file in turn and joins the intro and outro onto it (`join`, when the message has them);
 * `notWritten` turns a local failure to write into the node's error.
 */
export async function deliverOutputs(
  job: Job,
  client: MediaEnhanceClient,
  uid: string,
  wanted: OutputToDeliver[],
  place: DeliveryPlace,
  join: JoinInPlace | undefined,
  notWritten: (err: unknown) => unknown,
): Promise<DeliveredFile[]> {
  const { t } = job;
  const count = wanted.length;
  const files: DeliveredFile[] = [];
  for (const [index, { name, step, fileName }] of wanted.entries()) {
    const at = index + 1;
    if (count > 1) job.show({ text: t('media-enhance-file.status.fileOf', { name, index: at, count }) });
    const joinThis = join
      ? (path: string, beforeReplace: (episode: unknown) => Promise<void>) => {
          job.show({
            text:
              count > 1
                ? t('media-enhance-file.status.joiningFileOf', { name, index: at, count })
                : t('media-enhance-file.status.joining'),
          });
          return join(path, beforeReplace);
        }
      : undefined;
    if (place.toFile) {
      const folderPlace = { ...place, name: fileName };
      const earlier = await stillThere(place.delivered?.find((file) => file.name === name));
      if (earlier?.placing) await removeLinkedPart(folderPlace, uid, step, earlier.placing);
      // A file a restart cut right after it was put in place goes on from there (its join, if any, still to
      // come); one whose join a restart cut before it replaced the file is joined again; any other is handed on.
      const unfinished =
        earlier?.placing !== undefined ||
        (joinThis && earlier?.joining && (await bearsStamp(earlier.path, earlier.joining)));
      if (earlier && !unfinished) {
        files.push(finished(earlier));
        continue;
      }
      // Noted just before the download puts it in place, so that a crash right after finds it there.
      const beforePlace = place.keepDelivered
        ? ({ path, contentType, stamp }: Placing) =>
            place.keepDelivered!({
              name,
              path,
              contentType,
              file_name: basename(path),
              format: formatOf(path),
              placing: stamp,
            })
        : undefined;
      const written = earlier
        ? { path: earlier.path, contentType: earlier.contentType, fileName: earlier.file_name }
        : await downloadIntoFolder(client, uid, step, job, { ...folderPlace, beforePlace }).catch((err: unknown) => {
            throw notWritten(err);
          });
      const { path, contentType } = written;
      const file: DeliveredFile = { name, path, contentType, file_name: written.fileName, format: formatOf(path) };
      if (joinThis) {
        // Noted before the join, so a restart during it joins this file again rather than fetching a second copy.
        const joining = await stampOf(path);
        await place.keepDelivered?.({ ...file, joining });
        file.episode = await joinThis(path, async (episode) => place.keepDelivered?.({ ...file, episode, joining }));
      }
      await place.keepDelivered?.(file);
      files.push(file);
    } else {
      const got = await downloadAsBuffer(client, uid, step, job);
      const joined = joinThis ? await joinInBuffer(got.payload, joinThis) : { payload: got.payload };
      const { contentType, fileName: file_name } = got;
      files.push({ name, ...joined, contentType, file_name, format: formatOf(file_name) });
    }
  }
  return files;
}

/**
 * A file an earlier run delivered, while it is still in its place (removed since: fetched again); one
 * noted as it was being put in place, where it was put (never put there: fetched again).
 */
async function stillThere(file: KeptFile | undefined): Promise<(KeptFile & { path: string }) | undefined> {
  if (file?.path === undefined) return undefined;
  if (file.placing) {
    const placed = await findPlaced(file.path, file.placing);
    return placed === undefined ? undefined : { ...file, path: placed, file_name: basename(placed) };
  }
  const found = await stat(file.path).catch(() => undefined);
  return found?.isFile() ? { ...file, path: file.path } : undefined;
}

/** A kept file as the message hands it on (the journal's own notes left out). */
function finished({ placing: _placing, joining: _joining, ...file }: KeptFile): DeliveredFile {
  return file;
}

/** A Buffer's join: written to a private temporary folder, joined there, read back. */
async function joinInBuffer(payload: Buffer, join: JoinInPlace): Promise<{ payload: Buffer; episode: unknown }> {
  const folder = await mkdtemp(joinPath(tmpdir(), 'media-enhance-episode-'));
  try {
    const path = joinPath(folder, 'episode');
    await writeFile(path, payload, { mode: 0o600 });
    const episode = await join(path, () => Promise.resolve());
    return { payload: await readFile(path), episode };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
