// Reading a journal file back as something that may have been planted or damaged: only a regular file
// (not a link, a FIFO or a device) of bounded size is read, and its JSON nesting is bounded before it is
// parsed, so no file can hang the node, fill its memory or overflow a stack on the way to Catch. The
// reasons it gives never quote the file's content.
import { constants, promises as fsp } from 'node:fs';

/** Deeper than this, a kept message is not written, and a file is not parsed (a message is 2 levels inside its entry). */
export const MAX_ENTRY_DEPTH = 100;

/** A file that cannot be an entry; its message names what is wrong, never what the file holds. */
export class UnusableFile extends Error {}

/** The file's text, when it is a regular file (not followed through a link) of at most `maxBytes` bytes. */
export async function readRegularFile(path: string, maxBytes: number): Promise<string> {
  const seen = await fsp.lstat(path);
  if (!seen.isFile()) throw new UnusableFile(`not a regular file (${kindOf(seen)})`);
  if (seen.size > maxBytes) throw new UnusableFile(`${seen.size} bytes, more than the ${maxBytes} an entry may have`);
  // Opened without following a link and without waiting for a writer: the name may change after the lstat.
  const flags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  const handle = await fsp.open(path, flags).catch((err: NodeJS.ErrnoException) => {
    throw new UnusableFile(`cannot be opened (${err.code ?? 'error'})`);
  });
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw new UnusableFile(`not a regular file (${kindOf(opened)})`);
    const buffer = Buffer.alloc(Math.min(opened.size, maxBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) throw new UnusableFile(`more than the ${maxBytes} bytes an entry may have`);
    return buffer.toString('utf8', 0, length);
  } finally {
    await handle.close();
  }
}

function kindOf(stats: import('node:fs').Stats): string {
  if (stats.isSymbolicLink()) return 'a link';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a file';
}

/** How deeply the JSON text's arrays and objects nest (brackets inside strings do not count); one pass, no recursion. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** JSON.parse, after checking the nesting; the error says what is wrong without quoting the text. */
export function parseBoundedJson(text: string): unknown {
  const depth = jsonDepth(text);
  if (depth > MAX_ENTRY_DEPTH) throw new UnusableFile(`nested ${depth} deep, more than the ${MAX_ENTRY_DEPTH} allowed`);
  try {
    return JSON.parse(text);
  } catch {
    throw new UnusableFile('not valid JSON');
  }
}
