// Reading a node's inputs from a message. Every error names the msg property, the value and the rule,
// and is a VALIDATION error: nothing was sent to the service (input-error.ts).
import { promises as fsp } from 'node:fs';
import { homedir } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { checkMediaUid, STEPS, type Step } from '../contract/fields';
import { inputError } from './input-error';
import type { NodeMessage } from './red';
import type { Translate } from './texts';

export function readMediaUid(t: Translate, msg: NodeMessage, options: { orPayload?: boolean } = {}): string {
  const uid = msg.media_uid ?? (options.orPayload && typeof msg.payload === 'string' ? msg.payload : undefined);
  const field = options.orPayload ? t('media-enhance.input.mediaUidOrPayload') : 'msg.media_uid';
  if (typeof uid !== 'string' || checkMediaUid(uid).length > 0) {
    throw inputError(t, field, uid, t('media-enhance.rule.mediaUid'));
  }
  return uid;
}

export function readStep(t: Translate, msg: NodeMessage, configured: Step): Step {
  if (msg.step === undefined) return configured;
  if (typeof msg.step !== 'string' || !(STEPS as readonly string[]).includes(msg.step)) {
    throw inputError(t, 'msg.step', msg.step, t('media-enhance.rule.oneOf', { values: STEPS.join(', ') }));
  }
  return msg.step as Step;
}

/**
 * A relative path means one under Node-RED's working folder for files, as the core file nodes do; `~` and
 * `~/...` mean the home folder, as in a shell (not a folder named `~` in the working folder).
 */
export function resolvePath(path: string, workingDirectory: string | undefined): string {
  if (path === '~' || path.startsWith('~/')) return join(homedir(), path.slice(1));
  return isAbsolute(path) ? path : resolve(workingDirectory ?? process.cwd(), path);
}

export interface FileToSend {
  file: Buffer | string;
  fileName: string;
}

/** The file of an upload: a Buffer in msg.payload (named after msg.filename), or a path in msg.filename. */
export async function readFileInput(
  t: Translate,
  msg: NodeMessage,
  workingDirectory: string | undefined,
): Promise<FileToSend> {
  const { payload, filename } = msg;
  if (filename !== undefined && (typeof filename !== 'string' || filename.length === 0)) {
    throw inputError(t, 'msg.filename', filename, t('media-enhance.rule.filePath'));
  }
  if (Buffer.isBuffer(payload)) {
    if (payload.length === 0) throw inputError(t, 'msg.payload', payload, t('media-enhance.rule.fileEmpty'));
    return { file: payload, fileName: filename ? basename(filename) : 'media' };
  }
  if (typeof filename !== 'string') {
    throw inputError(t, 'msg.payload', payload, t('media-enhance.rule.fileRequired'));
  }
  const path = resolvePath(filename, workingDirectory);
  const stat = await fsp.stat(path).catch(() => undefined);
  if (!stat) throw inputError(t, 'msg.filename', filename, t('media-enhance.rule.noSuchFile'));
  if (!stat.isFile()) throw inputError(t, 'msg.filename', filename, t('media-enhance.rule.notAFile'));
  if (stat.size === 0) throw inputError(t, 'msg.filename', filename, t('media-enhance.rule.fileEmpty'));
  return { file: path, fileName: basename(path) };
}

/** `msg.enhancement`: absent, or an object whose members override the node's enhancement. */
export function readOverrides(t: Translate, msg: NodeMessage): Record<string, unknown> {
  const overrides = msg.enhancement;
  if (overrides === undefined || overrides === null) return {};
  if (typeof overrides !== 'object' || Array.isArray(overrides))
    throw inputError(t, 'msg.enhancement', overrides, t('media-enhance.rule.overridesObject'));
  return overrides as Record<string, unknown>;
}
