// A file given by path may still be being written (a watch node fires when a copy starts): it is read
// only once its size and modification time have not changed for the node's settle time. A file last
// changed longer ago than that is read at once, so files at rest cost one stat.
import { promises as fsp } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { inputError } from './input-error';
import type { Job } from './message-jobs';
import { resolvePath } from './msg-inputs';
import type { NodeDef } from './red';
import type { Translate } from './texts';

/** The default settle time, for nodes saved before the setting existed too. */
export const DEFAULT_SETTLE_SECONDS = 2;
/** The longest a file may take to settle, as the setting's bound (a minute of silence is not a copy). */
export const MAX_SETTLE_SECONDS = 60;
/** How often a file that is still changing is looked at. */
const LOOK_EVERY_MS = 200;

/** The node's settle time in ms: its "wait for the file to settle" setting (seconds; empty: the default). */
export function readSettleMs(t: Translate, def: NodeDef): number {
  const raw = def.settle;
  if (raw === undefined || raw === '') return DEFAULT_SETTLE_SECONDS * 1000;
  const seconds = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : NaN;
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_SETTLE_SECONDS) {
    const setting = { prop: 'settle', label: t('media-enhance.setting.settle') };
    throw inputError(t, setting, raw, t('media-enhance.rule.settleSeconds', { max: MAX_SETTLE_SECONDS }));
  }
  return seconds * 1000;
}

/**
 * Waits until the message's input file (msg.filename, when msg.payload is not a Buffer) has not changed
 * for `settleMs`, showing "waiting for the file to settle". 0 does not wait. A file gone meanwhile is
 * the usual "no such file" error; a stop (redeploy) ends the wait at once.
 */
export async function waitForInputToSettle(job: Job, settleMs: number, workingDirectory?: string): Promise<void> {
  const { msg, t } = job;
  if (settleMs <= 0 || Buffer.isBuffer(msg.payload) || typeof msg.filename !== 'string' || msg.filename === '') return;
  const path = resolvePath(msg.filename, workingDirectory);
  const look = async () => {
    const stat = await fsp.stat(path).catch(() => undefined);
    if (!stat) throw inputError(t, 'msg.filename', msg.filename, t('media-enhance.rule.noSuchFile'));
    return { size: stat.size, mtimeMs: stat.mtimeMs };
  };
  let last = await look();
  // The modification time says since when the file has not changed (one in the future is not believed).
  let unchangedSince = Math.min(last.mtimeMs, Date.now());
  let shown = false;
  while (Date.now() - unchangedSince < settleMs) {
    if (!shown) job.show({ text: t('media-enhance.status.settling'), fill: 'yellow' });
    shown = true;
    await sleep(Math.min(LOOK_EVERY_MS, settleMs), undefined, { signal: job.signal });
    const seen = await look();
    if (seen.size !== last.size || seen.mtimeMs !== last.mtimeMs) unchangedSince = Date.now();
    last = seen;
  }
}
