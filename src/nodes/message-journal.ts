// The messages a node has taken on for a media and not yet delivered (an upload, a wait, a download), kept on disk
// so a restart, a full deploy or a stop and start of the node resumes them. One small file per message,
// written atomically (a temporary file, synced, then renamed), so a crash leaves either the whole entry
// or none, and a damaged file costs only its own entry.
//
// Layout: <userDir>/media-enhance/<config node id>/kept/<node id>/<entry>.json, each id encoded into one
// path segment (id-segment.ts). A media uid only means something on its own service, so the entries live
// under the config node that names it. Every write and removal stays inside that root (contained-path.ts);
// files read back are treated as possibly planted (journal-file.ts).
import { randomUUID } from 'node:crypto';
import { promises as fsp, unlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { insideRoot } from '../contract/contained-path';
import { isFileStamp } from '../client/file-stamp';
import type { KeptFile } from './deliver-outputs';
import { idSegment } from './id-segment';
import { MAX_ENTRY_DEPTH, jsonDepth, parseBoundedJson, readRegularFile, UnusableFile } from './journal-file';
import type { NodeMessage, RuntimeSettings } from './red';
import type { Translate } from './texts';

const ENTRY_SUFFIX = '.json';

/** What a kept message may hold as JSON unless settings.js says otherwise (`mediaEnhance.keptMessageMaxBytes`). */
export const DEFAULT_KEPT_MESSAGE_BYTES = 1024 * 1024;
/** Room an entry takes beyond its message (times, uid, part file, the names of dropped properties). */
const ENTRY_OVERHEAD_BYTES = 64 * 1024;

export interface JournalEntry {
  /** Absent while the message's file is not yet uploaded (a restart then uploads it again). */
  mediaUid?: string;
  /** When the node took the message on (epoch ms). */
  startedAt: number;
  /** Since when the media is known (epoch ms): a wait's timeout counts from here, restarts included. */
  mediaSince?: number;
  /** The `.part` file a download to a file is writing: removed with the entry when the message is dropped. */
  partFile?: string;
  msg: NodeMessage;
  /**
   * Each file the message's delivery has put in place so far (several outputs, one after the other): a
   * restart hands these on as they are instead of fetching them again beside themselves (one whose intro
   * and outro were being joined, and that the join has not replaced, is joined again).
   */
  delivered?: KeptFile[];
  /** Properties of the message that could not be kept (a Buffer payload, a live request object, one too large). */
  dropped: string[];
}

export interface KeptMessage {
  entry: JournalEntry;
  /** Notes the media the message's upload created, so a restart goes on from it instead of uploading again. */
  recordMedia(mediaUid: string): Promise<void>;
  /** Notes the part file of the message's download (the one noted before, if another, is removed). */
  recordPartFile(path: string): Promise<void>;
  /** Notes a file the message's delivery put in place (one of the same output noted before is replaced). */
  recordDelivered(file: KeptFile): Promise<void>;
  /** Ends the entry; synchronous, so it happens in the same tick as the message's send. */
  remove(): void;
}

export interface JournalContents {
  kept: KeptMessage[];
  /** Files that could not be read back, each with the reason (never their content). */
  unreadable: string[];
}

/** The folder of every config node's journals. */
export function journalRoot(runtimeSettings: RuntimeSettings): string {
  return join(runtimeSettings.userDir ?? join(homedir(), '.node-red'), 'media-enhance');
}

export const KEPT_FOLDER = 'kept';

/** The folder of a config node's journals (its nodes' folders are under `kept/`). */
export function serviceFolder(runtimeSettings: RuntimeSettings, configId: string): string {
  return join(journalRoot(runtimeSettings), idSegment(configId));
}

export function keptFolder(runtimeSettings: RuntimeSettings, configId: string, nodeId: string): string {
  return join(serviceFolder(runtimeSettings, configId), KEPT_FOLDER, idSegment(nodeId));
}

/**
 * The most a kept message may hold as JSON: settings.js's `mediaEnhance.keptMessageMaxBytes` when it is
 * a whole number of at least 1024, else the default (`warn` names the setting and the value refused).
 */
export function keptMessageMaxBytes(runtimeSettings: RuntimeSettings, warn?: (text: string) => void): number {
  const section = runtimeSettings.mediaEnhance as { keptMessageMaxBytes?: unknown } | undefined;
  const value = section?.keptMessageMaxBytes;
  if (value === undefined) return DEFAULT_KEPT_MESSAGE_BYTES;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1024) return value;
  warn?.(
    `mediaEnhance.keptMessageMaxBytes: ${JSON.stringify(value) ?? typeof value} is not a whole number of bytes of at least 1024; ${DEFAULT_KEPT_MESSAGE_BYTES} is used`,
  );
  return DEFAULT_KEPT_MESSAGE_BYTES;
}

export interface JournalPlace {
  /** The journals' root: nothing outside it is written or removed. */
  root: string;
  /** The folders the node writes its downloads to: only part files directly inside one are ever removed. */
  partFolders: readonly string[];
  /** The most a kept message may hold as JSON (larger properties are dropped and named). */
  maxMessageBytes: number;
}

export class MessageJournal {
  readonly folder: string;

  constructor(
    folder: string,
    private readonly place: JournalPlace,
  ) {
    this.folder = insideRoot(place.root, folder);
  }

  /** Keeps a message; rejects when the disk refuses it (the caller decides whether to go on without). */
  async keep(mediaUid: string | undefined, msg: NodeMessage, startedAt = Date.now()): Promise<KeptMessage> {
    const { kept, dropped } = journalSafeMessage(msg, this.place.maxMessageBytes);
    const entry: JournalEntry = {
      mediaUid,
      startedAt,
      mediaSince: mediaUid === undefined ? undefined : startedAt,
      msg: kept,
      dropped,
    };
    const file = this.entryPath(`${startedAt}-${randomUUID()}${ENTRY_SUFFIX}`);
    await fsp.mkdir(this.folder, { recursive: true, mode: 0o700 });
    await writeAtomically(file, entry);
    return this.keptMessage(file, entry);
  }

  /** Every message kept in the folder, oldest first; leftover temporary files (a crash mid-write) are removed. */
  async load(): Promise<JournalContents> {
    let names: string[];
    try {
      // A link in place of the folder is not followed: it would read and remove elsewhere.
      if (!(await fsp.lstat(this.folder)).isDirectory()) throw new UnusableFile('the journal is not a folder');
      names = await fsp.readdir(this.folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kept: [], unreadable: [] };
      throw err;
    }
    const kept: KeptMessage[] = [];
    const unreadable: string[] = [];
    const maxFileBytes = this.place.maxMessageBytes + ENTRY_OVERHEAD_BYTES;
    for (const name of names.sort()) {
      const file = this.entryPath(name);
      if (!name.endsWith(ENTRY_SUFFIX)) {
        if (name.endsWith(`${ENTRY_SUFFIX}.tmp`)) removeQuietly(file);
        continue;
      }
      try {
        kept.push(this.keptMessage(file, parseEntry(await readRegularFile(file, maxFileBytes))));
      } catch (err) {
        // Only reasons the journal gives itself: a file's content (a planted link's target) is never quoted.
        const code = (err as NodeJS.ErrnoException).code;
        const reason = err instanceof UnusableFile ? err.message : `cannot be read (${code ?? 'error'})`;
        unreadable.push(`${name}: ${reason}`);
      }
    }
    return { kept, unreadable };
  }

  /**
   * Removes the node's journal (the node is gone): its entries, their part files and the folder once
   * empty; anything else a person put there stays. Answers the entries it held, for the log to name them.
   */
  async discard(): Promise<JournalEntry[]> {
    const { kept } = await this.load();
    for (const { entry } of kept) await this.removePartFile(entry.partFile);
    for (const name of await fsp.readdir(this.folder).catch(() => [] as string[]))
      if (name.endsWith(ENTRY_SUFFIX) || name.endsWith(`${ENTRY_SUFFIX}.tmp`)) removeQuietly(this.entryPath(name));
    await fsp.rmdir(this.folder).catch(() => undefined);
    return kept.map(({ entry }) => entry);
  }

  private entryPath(name: string): string {
    return insideRoot(this.folder, join(this.folder, name));
  }

  /**
   * Removes a part file an entry names, only when it lies directly inside one of the node's download
   * folders under a part file's name (hidden, ending in `.part`): an entry pointing anywhere else,
   * planted or from a folder setting since changed, leaves that file alone. A link is removed, never followed.
   */
  private async removePartFile(path: string | undefined): Promise<void> {
    if (path === undefined || !isPartFileIn(path, this.place.partFolders)) return;
    await fsp.unlink(path).catch(() => undefined);
  }

  private keptMessage(file: string, entry: JournalEntry): KeptMessage {
    return {
      entry,
      recordMedia: async (mediaUid) => {
        entry.mediaUid = mediaUid;
        entry.mediaSince = Date.now();
        await writeAtomically(file, entry);
      },
      recordPartFile: async (path) => {
        if (entry.partFile === path) return;
        // The folder or name setting changed since: the part under the old name can no longer be continued.
        await this.removePartFile(entry.partFile);
        entry.partFile = path;
        await writeAtomically(file, entry);
      },
      recordDelivered: async (delivered) => {
        entry.delivered = [...(entry.delivered ?? []).filter((earlier) => earlier.name !== delivered.name), delivered];
        await writeAtomically(file, entry);
      },
      remove: () => removeQuietly(file),
    };
  }
}

/** A download's part file (`.<uid>.<step>[...].part`) directly inside one of `folders`. */
export function isPartFileIn(path: string, folders: readonly string[]): boolean {
  const resolved = resolve(path);
  const name = basename(resolved);
  if (!name.startsWith('.') || !name.endsWith('.part') || name === '.part') return false;
  return folders.some((folder) => resolve(folder) === dirname(resolved));
}

/**
 * A temporary file, synced, then renamed over the target and the folder synced: a crash or a power cut
 * leaves the old entry or the new one. (A removal is not synced: after a power cut a delivered message's
 * entry may come back, and the message be sent again.)
 */
async function writeAtomically(file: string, entry: JournalEntry): Promise<void> {
  const temporary = `${file}.tmp`;
  const handle = await fsp.open(temporary, 'w', 0o600);
  try {
    await handle.writeFile(JSON.stringify(entry));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsp.rename(temporary, file);
  const folder = await fsp.open(dirname(file), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

function parseEntry(text: string): JournalEntry {
  const entry = parseBoundedJson(text) as Partial<JournalEntry>;
  const uidValid = entry?.mediaUid === undefined || typeof entry.mediaUid === 'string';
  if (!uidValid || typeof entry.startedAt !== 'number' || typeof entry.msg !== 'object' || entry.msg === null) {
    throw new UnusableFile('not a kept message (startedAt or msg missing, or mediaUid not a string)');
  }
  const mediaSince = typeof entry.mediaSince === 'number' ? entry.mediaSince : undefined;
  const partFile = typeof entry.partFile === 'string' && entry.partFile.endsWith('.part') ? entry.partFile : undefined;
  return {
    mediaUid: entry.mediaUid,
    startedAt: entry.startedAt,
    mediaSince,
    partFile,
    msg: entry.msg,
    ...(Array.isArray(entry.delivered)
      ? { delivered: entry.delivered.filter(isKeptFile).flatMap(withSoundStamps) }
      : {}),
    dropped: Array.isArray(entry.dropped) ? entry.dropped.filter((d): d is string => typeof d === 'string') : [],
  };
}

/** A delivered file as an entry holds it: a written file's strings (a Buffer is never kept). */
function isKeptFile(value: unknown): value is KeptFile {
  const file = value as Partial<KeptFile> | null;
  return (
    typeof file === 'object' &&
    file !== null &&
    (['name', 'path', 'contentType', 'file_name', 'format'] as const).every((key) => typeof file[key] === 'string')
  );
}

/**
 * A file's stamps kept only when each is three numbers. A file with an unsound `joining` is handed on as
 * it is (never joined twice); one with an unsound `placing` is left out (it may never have been put in
 * place: it is fetched again).
 */
function withSoundStamps({ joining, placing, ...file }: KeptFile): KeptFile[] {
  if (placing !== undefined) return isFileStamp(placing) ? [{ ...file, placing }] : [];
  return [isFileStamp(joining) ? { ...file, joining } : file];
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** What a kept message was for, as a warning names it: "media 1a2b…" or "the upload of "take-1.wav"". */
export function describeEntry(t: Translate, entry: JournalEntry): string {
  if (entry.mediaUid) return t('media-enhance.keep.media', { uid: entry.mediaUid });
  const { filename } = entry.msg;
  return typeof filename === 'string'
    ? t('media-enhance.keep.uploadOf', { file: filename })
    : t('media-enhance.keep.uploadOfBuffer');
}

/**
 * The message as JSON can carry it, within `maxBytes` of JSON: binary data (a Buffer payload, a Buffer
 * inside an object), functions, what cannot be written as JSON (the live request and response objects of
 * an HTTP-in flow, anything circular), what nests too deep, and the largest properties beyond the bound
 * are left out, each top-level property concerned named, so the resumed message says what it lost. The
 * smallest properties are kept first, so the ones a node needs (a file name, a media uid) stay.
 */
export function journalSafeMessage(
  msg: NodeMessage,
  maxBytes = DEFAULT_KEPT_MESSAGE_BYTES,
): { kept: NodeMessage; dropped: string[] } {
  const dropped: string[] = [];
  const candidates: { property: string; text: string; bytes: number }[] = [];
  const tooLarge = (property: string, size: string) =>
    dropped.push(`${property} (${size}, more than the ${maxBytes} bytes a kept message may hold)`);
  for (const [property, value] of Object.entries(msg)) {
    if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) {
      dropped.push(`${property} (${value.byteLength} bytes of binary data)`);
      continue;
    }
    if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') {
      dropped.push(`${property} (a ${typeof value})`);
      continue;
    }
    // A string's JSON is at least as long as the string: one too long is not even written out.
    if (typeof value === 'string' && value.length > maxBytes) {
      tooLarge(property, `a string of ${value.length} characters`);
      continue;
    }
    let binaryInside = false;
    try {
      const text = JSON.stringify(value, function (this: Record<string, unknown>, key: string, inner: unknown) {
        // `this[key]` is the value before its toJSON (a Buffer's turns it into a large array of numbers).
        const original = key === '' ? value : this[key];
        if (Buffer.isBuffer(original) || ArrayBuffer.isView(original)) {
          binaryInside = true;
          return undefined;
        }
        return inner;
      });
      if (binaryInside) dropped.push(`${property} (binary data inside it)`);
      if (text === undefined) continue;
      // The entry holds the message, which holds the property: two levels of the bound are theirs.
      const depth = jsonDepth(text);
      if (depth > MAX_ENTRY_DEPTH - 2)
        dropped.push(`${property} (nested ${depth} deep, more than ${MAX_ENTRY_DEPTH - 2})`);
      else candidates.push({ property, text, bytes: Buffer.byteLength(text) });
    } catch (err) {
      dropped.push(`${property} (${(err as Error).message.split('\n')[0]})`);
    }
  }
  const keptNames = new Set<string>();
  let room = maxBytes;
  for (const { property, bytes } of [...candidates].sort((a, b) => a.bytes - b.bytes)) {
    if (bytes <= room) {
      keptNames.add(property);
      room -= bytes;
    } else tooLarge(property, `${bytes} bytes as JSON`);
  }
  const kept: NodeMessage = {};
  for (const { property, text } of candidates)
    if (keptNames.has(property)) kept[property] = JSON.parse(text) as unknown;
  return { kept, dropped };
}
