// Elapsed time as the node status lines and the editor's sidebar both show it (the sidebar's browser
// script bundles this file: it imports nothing).

/** 7s, 1m20s, 2h05m: whole seconds, as a status line has room for. */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
