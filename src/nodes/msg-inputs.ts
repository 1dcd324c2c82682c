// Reading a node's inputs from a message. Every error names the msg property, the value and the rule,
// and is a VALIDATION error: nothing was sent to the service.
import { promises as fsp } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import {
  checkMediaUid,
  describeValue as describeContractValue,
  STEPS,
  type FieldIssue,
  type Step,
} from '../contract/fields';
import { MediaEnhanceError } from '../client/errors';
import type { NodeMessage } from './red';

/** As the contract quotes a value, with words for what a msg often holds instead: a Buffer, or nothing. */
export function describeValue(value: unknown): string {
  if (Buffer.isBuffer(value)) return `a Buffer of ${value.length} bytes`;
  if (value === undefined) return 'nothing';
  return describeContractValue(value);
}

export function inputError(field: string, value: unknown, rule: string): MediaEnhanceError {
  const line = `${field}: ${rule} (got ${describeValue(value)})`;
  return new MediaEnhanceError('VALIDATION', line, { details: [line] });
}

/** Issues from the contract's checks, with `loc` turned into the names the user wrote. */
export function issuesError(issues: FieldIssue[], fieldName: (loc: FieldIssue['loc']) => string): MediaEnhanceError {
  const lines = issues.map((issue) => `${fieldName(issue.loc)}: ${issue.msg} (got ${describeValue(issue.input)})`);
  return new MediaEnhanceError('VALIDATION', lines.join('; '), { details: lines });
}

export function readMediaUid(msg: NodeMessage, options: { orPayload?: boolean } = {}): string {
  const uid = msg.media_uid ?? (options.orPayload && typeof msg.payload === 'string' ? msg.payload : undefined);
  const field = options.orPayload ? 'msg.media_uid (or a string msg.payload)' : 'msg.media_uid';
  if (typeof uid !== 'string' || checkMediaUid(uid).length > 0) {
    throw inputError(field, uid, 'a media uid is required: a string of 1 to 200 characters, as an upload node sets it');
  }
  return uid;
}

export function readStep(msg: NodeMessage, configured: Step): Step {
  if (msg.step === undefined) return configured;
  if (typeof msg.step !== 'string' || !(STEPS as readonly string[]).includes(msg.step)) {
    throw inputError('msg.step', msg.step, `must be one of ${STEPS.join(', ')}`);
  }
  return msg.step as Step;
}

/** A relative path means one under Node-RED's working folder for files, as the core file nodes do. */
export function resolvePath(path: string, workingDirectory: string | undefined): string {
  return isAbsolute(path) ? path : resolve(workingDirectory ?? process.cwd(), path);
}

export interface FileToSend {
  file: Buffer | string;
  fileName: string;
}

/** The file of an upload: a Buffer in msg.payload (named after msg.filename), or a path in msg.filename. */
export async function readFileInput(msg: NodeMessage, workingDirectory: string | undefined): Promise<FileToSend> {
  const { payload, filename } = msg;
  if (filename !== undefined && (typeof filename !== 'string' || filename.length === 0)) {
    throw inputError('msg.filename', filename, 'must be a file path (a non-empty string)');
  }
  if (Buffer.isBuffer(payload)) {
    if (payload.length === 0) throw inputError('msg.payload', payload, 'the file is empty');
    return { file: payload, fileName: filename ? basename(filename) : 'media' };
  }
  if (typeof filename !== 'string') {
    throw inputError('msg.payload', payload, 'a Buffer with the file, or a file path in msg.filename, is required');
  }
  const path = resolvePath(filename, workingDirectory);
  const stat = await fsp.stat(path).catch(() => undefined);
  if (!stat) throw inputError('msg.filename', filename, 'no such file');
  if (!stat.isFile()) throw inputError('msg.filename', filename, 'is not a file');
  if (stat.size === 0) throw inputError('msg.filename', filename, 'the file is empty');
  return { file: path, fileName: basename(path) };
}

/** `msg.enhancement`: absent, or an object whose members override the node's enhancement. */
export function readOverrides(msg: NodeMessage): Record<string, unknown> {
  const overrides = msg.enhancement;
  if (overrides === undefined || overrides === null) return {};
  if (typeof overrides !== 'object' || Array.isArray(overrides))
    throw inputError('msg.enhancement', overrides, 'must be an object of settings');
  return overrides as Record<string, unknown>;
}
