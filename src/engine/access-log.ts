import type { AccessLogEntry } from './options';

/** `2026-11-22T10:00:00.000Z POST /v2/medias 201 12.5ms`: never a header, so never a key. */
export function accessLogLine(entry: AccessLogEntry): string {
  return `${new Date().toISOString()} ${entry.method} ${entry.path} ${entry.status} ${entry.ms}ms`;
}
