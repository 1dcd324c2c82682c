// File names within what file systems take: a name a service gives made safe to write under (never a
// folder, never hidden), and names cut to a byte count on whole characters.
/** A name from the service never chooses a folder: only its last part, without control characters. */
export function safeFileName(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const last = name.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex -- control characters are what this pattern takes out of a file name
  const clean = last.replace(/[\u0000-\u001f\u007f<>:"|?*]/g, '_').trim();
  // A leading dot would hide the file (or name `.bashrc`, `..`): such a name is not taken from a service.
  if (clean === '' || clean.startsWith('.')) return undefined;
  return truncateUtf8(clean, MAX_NAME_BYTES);
}

/** File systems count a name's bytes (255 at most on most); the cut keeps whole characters. */
export const MAX_NAME_BYTES = 200;
export const MAX_FILE_NAME_BYTES = 255;

export function truncateUtf8(name: string, maxBytes: number): string {
  if (Buffer.byteLength(name) <= maxBytes) return name;
  let out = '';
  let bytes = 0;
  for (const char of name) {
    bytes += Buffer.byteLength(char);
    if (bytes > maxBytes) break;
    out += char;
  }
  return out;
}
