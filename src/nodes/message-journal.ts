// The messages a node has taken on for a media and not yet delivered (an upload, a wait, a download), kept on disk
// so a restart, a full deploy or a stop and start of the node resumes them. One small file per message,
// written atomically (a temporary file, synced, then renamed), so a crash leaves either the whole entry
// or none, and a damaged file costs only its own entry.
//
// Layout: <userDir>/media-enhance/<config node id>/kept/<node id>/<entry>.json. A media uid only means
// something on its own service, so the entries live under the config node that names it.
import { randomUUID } from 'node:crypto';
import { promises as fsp, unlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { NodeMessage, RuntimeSettings } from './red';
import type { Translate } from './texts';

const ENTRY_SUFFIX = '.json';

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
  /** Properties of the message that could not be kept (a Buffer payload, a live request object). */
  dropped: string[];
}

export interface KeptMessage {
  entry: JournalEntry;
  /** Notes the media the message's upload created, so a restart goes on from it instead of uploading again. */
  recordMedia(mediaUid: string): Promise<void>;
  /** Notes the part file of the message's download (the one noted before, if another, is removed). */
  recordPartFile(path: string): Promise<void>;
  /** Ends the entry; synchronous, so it happens in the same tick as the message's send. */
  remove(): void;
}

export interface JournalContents {
  kept: KeptMessage[];
  /** Files that could not be read back, each with the reason. */
  unreadable: string[];
}

/** The folder of every config node's journals. */
export function journalRoot(runtimeSettings: RuntimeSettings): string {
  return join(runtimeSettings.userDir ?? join(homedir(), '.node-red'), 'media-enhance');
}

function safeSegment(id: string): string {
  return id.replace(/[^\w.-]/g, '_');
}

export const KEPT_FOLDER = 'kept';

export function keptFolder(runtimeSettings: RuntimeSettings, configId: string, nodeId: string): string {
  return join(journalRoot(runtimeSettings), safeSegment(configId), KEPT_FOLDER, safeSegment(nodeId));
}

export class MessageJournal {
  constructor(readonly folder: string) {}

  /** Keeps a message; rejects when the disk refuses it (the caller decides whether to go on without). */
  async keep(mediaUid: string | undefined, msg: NodeMessage, startedAt = Date.now()): Promise<KeptMessage> {
    const { kept, dropped } = journalSafeMessage(msg);
    const entry: JournalEntry = {
      mediaUid,
      startedAt,
      mediaSince: mediaUid === undefined ? undefined : startedAt,
      msg: kept,
      dropped,
    };
    const file = join(this.folder, `${startedAt}-${randomUUID()}${ENTRY_SUFFIX}`);
    await fsp.mkdir(this.folder, { recursive: true, mode: 0o700 });
    await writeAtomically(file, entry);
    return keptMessage(file, entry);
  }

  /** Every message kept in the folder, oldest first; leftover temporary files (a crash mid-write) are removed. */
  async load(): Promise<JournalContents> {
    let names: string[];
    try {
      names = await fsp.readdir(this.folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kept: [], unreadable: [] };
      throw err;
    }
    const kept: KeptMessage[] = [];
    const unreadable: string[] = [];
    for (const name of names.sort()) {
      const file = join(this.folder, name);
      if (!name.endsWith(ENTRY_SUFFIX)) {
        if (name.endsWith(`${ENTRY_SUFFIX}.tmp`)) removeQuietly(file);
        continue;
      }
      try {
        kept.push(keptMessage(file, parseEntry(await fsp.readFile(file, 'utf8'))));
      } catch (err) {
        unreadable.push(`${name}: ${(err as Error).message}`);
      }
    }
    return { kept, unreadable };
  }

  /** Removes the whole folder (the node is gone); answers the entries it held, for the log to name them. */
  async discard(): Promise<JournalEntry[]> {
    const { kept } = await this.load();
    for (const { entry } of kept) if (entry.partFile) await fsp.rm(entry.partFile, { force: true });
    await fsp.rm(this.folder, { recursive: true, force: true });
    return kept.map(({ entry }) => entry);
  }
}

function keptMessage(file: string, entry: JournalEntry): KeptMessage {
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
      if (entry.partFile) await fsp.rm(entry.partFile, { force: true });
      entry.partFile = path;
      await writeAtomically(file, entry);
    },
    remove: () => removeQuietly(file),
  };
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
  const entry = JSON.parse(text) as Partial<JournalEntry>;
  const uidValid = entry?.mediaUid === undefined || typeof entry.mediaUid === 'string';
  if (!uidValid || typeof entry.startedAt !== 'number' || typeof entry.msg !== 'object' || entry.msg === null) {
    throw new Error('not a kept message (startedAt or msg missing, or mediaUid not a string)');
  }
  const mediaSince = typeof entry.mediaSince === 'number' ? entry.mediaSince : undefined;
  const partFile = typeof entry.partFile === 'string' && entry.partFile.endsWith('.part') ? entry.partFile : undefined;
  return {
    mediaUid: entry.mediaUid,
    startedAt: entry.startedAt,
    mediaSince,
    partFile,
    msg: entry.msg,
    dropped: Array.isArray(entry.dropped) ? entry.dropped : [],
  };
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
 * The message as JSON can carry it: binary data (a Buffer payload, a Buffer inside an object), functions,
 * and what cannot be written as JSON (the live request and response objects of an HTTP-in flow, anything
 * circular) are left out, each top-level property concerned named, so the resumed message says what it lost.
 */
export function journalSafeMessage(msg: NodeMessage): { kept: NodeMessage; dropped: string[] } {
  const kept: NodeMessage = {};
  const dropped: string[] = [];
  for (const [property, value] of Object.entries(msg)) {
    if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) {
      dropped.push(`${property} (${value.byteLength} bytes of binary data)`);
      continue;
    }
    if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') {
      dropped.push(`${property} (a ${typeof value})`);
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
      if (text !== undefined) kept[property] = JSON.parse(text) as unknown;
      if (binaryInside) dropped.push(`${property} (binary data inside it)`);
    } catch (err) {
      dropped.push(`${property} (${(err as Error).message.split('\n')[0]})`);
    }
  }
  return { kept, dropped };
}
