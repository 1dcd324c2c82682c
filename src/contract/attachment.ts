// How a file's name travels in a download's Content-Disposition, the same from the engine and from the
// editor's sidebar routes: only the last path segment, an ASCII fallback, and the exact name as RFC 5987 says;
// and how a receiver reads it back, the same in the client and in the sidebar's browser code.

/** The label's last path segment; 'media' when that names nothing (empty, only spaces or dots). */
export function baseName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  return /^[\s.]*$/.test(base) ? 'media' : base;
}

/** A file name's stem: its base name without the last extension (`episode.mp3` → `episode`; `.bashrc` stays). */
export function stemOf(name: string): string {
  const base = baseName(name);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/** `attachment; filename="..."`, plus `filename*` (RFC 5987) when the name is not plain ASCII. */
export function attachmentDisposition(name: string): string {
  const base = baseName(name);
  const ascii = base.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const extended = ascii === base ? '' : `; filename*=UTF-8''${encodeRfc5987(base)}`;
  return `attachment; filename="${ascii}"${extended}`;
}

/** Percent-encoding as RFC 5987's attr-char allows: encodeURIComponent leaves ' ( ) * unencoded. */
const encodeRfc5987 = (value: string) =>
  encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** `filename*=UTF-8''...` wins over `filename="..."` (RFC 6266). */
export function fileNameFromDisposition(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*\s*=\s*([\w-]+)'[^']*'([^;]+)/i.exec(header);
  if (extended) {
    try {
      return decodeURIComponent(extended[2].trim());
    } catch {
      // fall through to the plain form
    }
  }
  const quoted = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header);
  if (quoted) return quoted[1].replace(/\\(.)/g, '$1');
  const bare = /filename\s*=\s*([^;\s]+)/i.exec(header);
  return bare?.[1];
}
