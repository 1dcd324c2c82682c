// How enhance file and download hand on a media's files: one message with every file (msg.files, and
// msg.payload the first as before), or one message per file, each naming its output in msg.output and
// carrying msg.parts as Node-RED's split node writes it, so a join node in its automatic mode puts them
// back together in order. The setting is "Send".
import { randomUUID } from 'node:crypto';
import { extname } from 'node:path';
import { inputError } from './input-error';
import type { NodeDef, NodeMessage } from './red';
import type { Translate } from './texts';

export const SEND_FILES = ['together', 'each'] as const;
export type SendFiles = (typeof SEND_FILES)[number];
/** A node saved before the setting existed sends one message, as it always did. */
export const DEFAULT_SEND_FILES: SendFiles = 'together';

/** One file a node delivers: in a folder (`path`) or in memory (`payload`). */
export interface DeliveredFile {
  /** The output's name: `enhanced` for the interface's ENHANCED step, else the further output's. */
  name: string;
  path?: string;
  payload?: Buffer;
  contentType: string;
  /** The name the service gave the file. */
  file_name: string;
  /** Its format, as its extension says: `mp3`, `wav`, `m4a`... */
  format: string;
  /** What joining an intro and an outro did to this file (episode-join.ts). */
  episode?: unknown;
}

/** The node's "Send" setting; throws the setting, its value and the rule when it is none of them. */
export function readSendFiles(t: Translate, def: NodeDef): SendFiles {
  const value = def.sendFiles === undefined || def.sendFiles === '' ? DEFAULT_SEND_FILES : def.sendFiles;
  if (!(SEND_FILES as readonly unknown[]).includes(value)) {
    const setting = { prop: 'sendFiles', label: t('media-enhance.setting.sendFiles') };
    throw inputError(t, setting, def.sendFiles, t('media-enhance.rule.oneOf', { values: SEND_FILES.join(', ') }));
  }
  return value as SendFiles;
}

/** The file's format, from the name the service gave it (or its path). */
export function formatOf(fileName: string): string {
  return extname(fileName).slice(1).toLowerCase();
}

/**
 * The message(s) to send for `files` (the first is the one msg.payload carries). `msg` already has what
 * every message shares (msg.media, msg.loudness...); with one message per file each is a shallow copy.
 */
export function filesMessages(
  msg: NodeMessage,
  files: DeliveredFile[],
  send: SendFiles,
  /** Whether msg.payload carries a written file's path too (enhance file), or only msg.filename (download). */
  pathInPayload: boolean,
): NodeMessage | NodeMessage[] {
  const entries = files.map(fileEntry);
  if (send === 'together' || files.length === 1) {
    putFile(msg, files[0], pathInPayload);
    msg.files = entries;
    return msg;
  }
  const id = typeof msg._msgid === 'string' ? msg._msgid : randomUUID();
  return files.map((file, index) => {
    const one: NodeMessage = { ...msg };
    delete one.files;
    putFile(one, file, pathInPayload);
    one.output = file.name;
    one.file = entries[index];
    // As a split node writes it; a message that was itself a part keeps that as the parent.
    one.parts = {
      id,
      index,
      count: files.length,
      type: 'array',
      len: 1,
      ...(msg.parts !== undefined ? { parts: msg.parts } : {}),
    };
    return one;
  });
}

function fileEntry(file: DeliveredFile): Record<string, unknown> {
  return {
    name: file.name,
    ...(file.path !== undefined ? { path: file.path } : { payload: file.payload }),
    format: file.format,
    contentType: file.contentType,
    file_name: file.file_name,
    ...(file.episode !== undefined ? { episode: file.episode } : {}),
  };
}

/** msg.payload (and msg.filename for a file) as a single file's message has always carried them. */
function putFile(msg: NodeMessage, file: DeliveredFile, pathInPayload: boolean): void {
  if (file.path !== undefined) {
    msg.filename = file.path;
    if (pathInPayload) msg.payload = file.path;
  } else {
    msg.payload = file.payload;
  }
  msg.contentType = file.contentType;
  if (file.episode !== undefined) msg.episode = file.episode;
}
