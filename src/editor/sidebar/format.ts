// Numbers, durations and times as the tab shows them.

/** 7s, 1m20s, 2h05m: the node status lines' own format, so a row and its node's status agree. */
export { duration } from '../../nodes/duration';

/** Looks a text up in the tab's message catalog, filling `__name__` placeholders (Node-RED's i18n). */
export type Translate = (key: string, values?: Record<string, string | number>) => string;

/** The wall-clock time of an epoch-ms instant, hh:mm:ss in the browser's time zone. */
export function clockTime(epochMs: number): string {
  const at = new Date(epochMs);
  return [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** The first 8 characters of a media uid: enough to tell media apart in a list. */
export function shortUid(uid: string | null): string {
  return uid === null ? '–' : uid.slice(0, 8);
}

/** "-16.0": one decimal, or a dash for "not measured" (silence, or no figure given). */
export function decibels(value: number | null | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(1) : '–';
}

/** A gain: "+6.2", "-3.0". */
export function signedDecibels(value: number | null | undefined): string {
  const text = decibels(value);
  return typeof value === 'number' && value > 0 ? `+${text}` : text;
}

/** 812 B, 3.4 KiB, 12.0 MiB, 1.5 GiB: binary units, as the retention's size limit is set. */
export function bytesText(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** A rate limit's window as a person says it: "1 min", "30 s". */
export function windowLength(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}
