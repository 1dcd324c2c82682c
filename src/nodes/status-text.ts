// The short texts under a node in the editor: "queued 2nd", "rate limited 12s", "uploading 42%".
import type { MediaEnhanceErrorCode } from '../client/errors';
import type { WaitEvent } from '../client/transport';
import type { MediaMetadata } from '../client/types';
import type { NodeStatus } from './red';

export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** 7s, 1m20s, 2h05m: whole seconds, as a status line has room for. */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** An estimate as a person says it: "about 8 s", "about 40 s", "about 3 min". */
export function roughly(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 10) return `${Math.ceil(seconds)} s`;
  if (seconds < 90) return `${Math.round(seconds / 5) * 5} s`;
  return `${Math.round(seconds / 60)} min`;
}

export function waitText(event: WaitEvent): string {
  if (event.reason === 'queued')
    return `queued ${ordinal(event.position ?? 1)}${event.waitMs >= 1000 ? `, about ${roughly(event.waitMs)}` : ''}`;
  if (event.reason === 'rate-limited') return `rate limited ${duration(event.waitMs)}`;
  return `retrying in ${duration(event.waitMs)}`;
}

/** "uploading 42%", or "uploading 12.5 MB" when the size is not known in advance. */
export function progressText(verb: string, done: number, total: number | undefined): string {
  if (total && total > 0) return `${verb} ${Math.min(100, Math.floor((done / total) * 100))}%`;
  return `${verb} ${(done / 1e6).toFixed(1)} MB`;
}

const REASONS: Record<MediaEnhanceErrorCode, string> = {
  VALIDATION: 'invalid input',
  AUTH: 'API key refused',
  NOT_FOUND: 'media not found',
  NOT_READY: 'not ready',
  RATE_LIMITED: 'rate limited',
  TOO_LARGE: 'file too large',
  UNSUPPORTED: 'unsupported format',
  JOB_FAILED: 'enhancement failed',
  TIMEOUT: 'timed out',
  ABORTED: 'cancelled',
  NETWORK: 'service unreachable',
  HTTP: 'service error',
};

/** The red-ring reason for an error: short; the full message goes to the log and Catch nodes. */
export function failureText(err: unknown): string {
  const { code, details } = (err ?? {}) as { code?: string; details?: unknown };
  if (code === 'VALIDATION' && Array.isArray(details) && details.length > 0) {
    // The node's own settings are named `setting "<label>"` (msg properties by their path): a bad
    // setting is not the message's fault, and says so as the status shown at deploy does.
    if (details.every((line) => String(line).startsWith('setting "service"'))) return 'no service';
    if (details.every((line) => String(line).startsWith('setting "'))) return 'invalid settings';
  }
  return (code && REASONS[code as MediaEnhanceErrorCode]) || 'error';
}

/**
 * The status a finished job ends on: green "done", or yellow when the media's metadata says its loudness
 * target was out of reach: "done: -14.3 LUFS, target -10 not reachable".
 */
export function doneStatus(media?: MediaMetadata): NodeStatus {
  const params = media?.enhancement_params ?? {};
  if (params.target_reached !== false) return { fill: 'green', shape: 'dot', text: 'done' };
  const reached =
    typeof params.output_loudness_lufs === 'number' ? `${params.output_loudness_lufs.toFixed(1)} LUFS` : 'silent';
  const target = typeof params.loudness_target === 'number' ? ` ${params.loudness_target}` : '';
  return { fill: 'yellow', shape: 'dot', text: `done: ${reached}, target${target} not reachable` };
}
