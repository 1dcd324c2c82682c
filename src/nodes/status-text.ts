// The short texts under a node in the editor: "queued 2nd", "rate limited 12s", "uploading 42%", each
// sentence from the message catalogs (texts.ts); the numbers and durations in them are formatted here.
import type { MediaEnhanceErrorCode } from '../client/errors';
import type { WaitEvent } from '../client/transport';
import type { MediaMetadata } from '../client/types';
import type { MediaState } from '../contract/endpoints';
import { progressOf } from '../contract/media-progress';
import { namesOnlySettings } from './input-error';
import type { NodeStatus } from './red';
import type { Translate } from './texts';
import { duration } from './duration';

export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** An estimate as a person says it: "about 8 s", "about 40 s", "about 3 min". */
export function roughly(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 10) return `${Math.max(1, Math.ceil(seconds))} s`;
  if (seconds < 90) return `${Math.round(seconds / 5) * 5} s`;
  return `${Math.round(seconds / 60)} min`;
}

export function waitText(t: Translate, event: WaitEvent): string {
  if (event.reason === 'queued') {
    const position = ordinal(event.position ?? 1);
    if (event.waitMs < 1000) return t('media-enhance.status.queued', { position });
    return t('media-enhance.status.queuedFor', { position, wait: roughly(event.waitMs) });
  }
  if (event.reason === 'rate-limited') return t('media-enhance.status.rateLimited', { wait: duration(event.waitMs) });
  return t('media-enhance.status.retrying', { wait: duration(event.waitMs) });
}

export type Transfer = 'uploading' | 'downloading';

/** "uploading 42%", or "uploading 12.5 MB" when the size is not known in advance. */
export function progressText(t: Translate, transfer: Transfer, done: number, total: number | undefined): string {
  if (total && total > 0) {
    const percent = Math.min(100, Math.floor((done / total) * 100));
    return transfer === 'uploading'
      ? t('media-enhance.status.uploadingPercent', { percent })
      : t('media-enhance.status.downloadingPercent', { percent });
  }
  const megabytes = (done / 1e6).toFixed(1);
  return transfer === 'uploading'
    ? t('media-enhance.status.uploadingMegabytes', { megabytes })
    : t('media-enhance.status.downloadingMegabytes', { megabytes });
}

const STATES: Record<MediaState, string> = {
  PENDING: 'media-enhance.state.pending',
  PROCESSING: 'media-enhance.state.processing',
  COMPLETED: 'media-enhance.state.completed',
  FAILED: 'media-enhance.state.failed',
};

/** The media's state as the service names it: "processing". */
export function stateText(t: Translate, state: string): string {
  const key = STATES[state as MediaState] as string | undefined;
  return key ? t(key) : state.toLowerCase();
}

const REASONS: Record<MediaEnhanceErrorCode, string> = {
  VALIDATION: 'media-enhance.reason.invalidInput',
  AUTH: 'media-enhance.reason.keyRefused',
  NOT_FOUND: 'media-enhance.reason.notFound',
  NOT_READY: 'media-enhance.reason.notReady',
  RATE_LIMITED: 'media-enhance.reason.rateLimited',
  TOO_LARGE: 'media-enhance.reason.tooLarge',
  UNSUPPORTED: 'media-enhance.reason.unsupported',
  JOB_FAILED: 'media-enhance.reason.jobFailed',
  TIMEOUT: 'media-enhance.reason.timedOut',
  ABORTED: 'media-enhance.reason.cancelled',
  NETWORK: 'media-enhance.reason.unreachable',
  HTTP: 'media-enhance.reason.serviceError',
  FILE: 'media-enhance.reason.fileError',
};

/** The red-ring reason for an error: short; the full message goes to the log and Catch nodes. */
export function failureText(t: Translate, err: unknown): string {
  // A bad setting of the node is not the message's fault, and says so as the status shown at deploy does.
  if (namesOnlySettings(err, 'service')) return t('media-enhance.reason.noService');
  if (namesOnlySettings(err)) return t('media-enhance.reason.invalidSettings');
  const { code } = (err ?? {}) as { code?: string };
  const key = code === undefined ? undefined : (REASONS[code as MediaEnhanceErrorCode] as string | undefined);
  return t(key ?? 'media-enhance.reason.error');
}

/**
 * A processing media as far as the service says it is: "processing 42%, about 30 s left", "processing 42%"
 * while the service has no estimate yet; undefined when it says nothing of its progress.
 */
export function processingText(t: Translate, media: MediaMetadata): string | undefined {
  const progress = progressOf(media);
  if (!progress) return undefined;
  const percent = Math.floor(progress.percent);
  const left = progress.seconds_left === null ? undefined : roughly(progress.seconds_left * 1000);
  // Taken over, the work started over on another engine: the lower percent says why it went back.
  if (progress.taken_over)
    return left === undefined
      ? t('media-enhance.status.takenOverPercent', { percent })
      : t('media-enhance.status.takenOverLeft', { percent, left });
  if (left === undefined) return t('media-enhance.status.processingPercent', { percent });
  return t('media-enhance.status.processingLeft', { percent, left });
}

/** The node's log line when a media's job was taken over by another engine (once per media). */
export function takenOverText(t: Translate, uid: string, media: MediaMetadata): string | undefined {
  const takenOver = progressOf(media)?.taken_over;
  if (!takenOver) return undefined;
  const before = takenOver.percent_before;
  return before === null
    ? t('media-enhance.log.takenOver', { uid })
    : t('media-enhance.log.takenOverAt', { uid, percent: Math.floor(before) });
}

/**
 * The status a finished job ends on: green "done: -32.8 -> -19.0 LUFS" (the loudness before and after,
 * when the media's metadata has them; else "done"), or yellow when its loudness target was out of reach:
 * "done: -14.3 LUFS, target -10 not reachable".
 */
export function doneStatus(t: Translate, media?: MediaMetadata): NodeStatus {
  const params = media?.enhancement_params ?? {};
  if (params.target_reached !== false) {
    const { input_loudness_lufs: input, output_loudness_lufs: output } = params;
    const text =
      typeof input === 'number' && typeof output === 'number'
        ? t('media-enhance.status.doneLoudness', { input: input.toFixed(1), output: output.toFixed(1) })
        : t('media-enhance.status.done');
    return { fill: 'green', shape: 'dot', text };
  }
  const reached =
    typeof params.output_loudness_lufs === 'number'
      ? t('media-enhance.status.lufs', { lufs: params.output_loudness_lufs.toFixed(1) })
      : t('media-enhance.status.silent');
  const text =
    typeof params.loudness_target === 'number'
      ? t('media-enhance.status.targetMissed', { reached, target: params.loudness_target })
      : t('media-enhance.status.targetMissedUnknown', { reached });
  return { fill: 'yellow', shape: 'dot', text };
}
