// Part headers as some clients write them, made readable to the multipart parser. A client that puts a
// file name between quotes as it is (`filename="say "hi".wav"`) sends a Content-Disposition busboy cannot
// read: it skips the part, and the upload was refused as having no file (`file: field required`). The
// part headers among a body's first bytes are mended: a double quote inside a filename value is escaped
// (a quoted-pair, as curl sends it), and the parser reads the name as the client meant it.
import { Transform, type TransformCallback } from 'node:stream';

/** How far into a body part headers are mended: the file part and its settings part come first. */
const MENDED_BYTES = 128 * 1024;

/**
 * The most bytes one part's header block may hold, its blank line included: what the multipart parser
 * reads (busboy's bound, Node's default for a request head). A longer one is refused before it is mended,
 * so that mending costs at most this much per part.
 */
export const MAX_PART_HEADER_BYTES = 16 * 1024;

/** A part header block longer than MAX_PART_HEADER_BYTES. */
export class PartHeadersTooLong extends Error {
  constructor() {
    super(`a form part's headers are longer than the ${MAX_PART_HEADER_BYTES} bytes this service reads`);
  }
}

const DISPOSITION = 'content-disposition:';
/** Where a quoted filename parameter opens (after the Content-Disposition's name). */
const FILENAME_OPENS = /;[ \t]*filename="/gi;

/** The boundary of a multipart Content-Type, or undefined. */
export function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match ? (match[1] ?? match[2]) : undefined;
}

/**
 * Passes a multipart body on, its first MENDED_BYTES held back until their part headers are mended; a
 * part header block over MAX_PART_HEADER_BYTES among them ends it with PartHeadersTooLong.
 */
export function partHeaderMender(boundary: string): Transform {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let passing = false;
  const mendHeld = (callback: TransformCallback) => {
    try {
      const head = mendPartHeaders(Buffer.concat(held), boundary);
      held = [];
      callback(null, head);
    } catch (err) {
      callback(err as Error);
    }
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (passing) return callback(null, chunk);
      held.push(chunk);
      heldBytes += chunk.length;
      if (heldBytes < MENDED_BYTES) return callback();
      passing = true;
      mendHeld(callback);
    },
    flush(callback) {
      if (passing) callback();
      else mendHeld(callback);
    },
  });
}

/**
 * `body` with the filename of each whole part header block in it escaped; every other byte as it was.
 * Time linear in the body: each byte is looked at a bounded number of times (no backtracking search).
 * Throws PartHeadersTooLong for a header block over MAX_PART_HEADER_BYTES.
 */
export function mendPartHeaders(body: Buffer, boundary: string): Buffer {
  const text = body.toString('latin1'); // one char per byte: the bytes come back unchanged
  const delimiter = `--${boundary}\r\n`;
  let mended = '';
  let copiedTo = 0;
  // Each search starts past the last header block: a delimiter-like line inside one is not looked at again.
  for (
    let found = text.indexOf(delimiter);
    found >= 0;
    found = text.indexOf(delimiter, Math.max(found + 1, copiedTo))
  ) {
    // A delimiter starts the body or a line; the same bytes inside a part's content are not one.
    if (found > 0 && text.slice(found - 2, found) !== '\r\n') continue;
    const start = found + delimiter.length;
    const end = text.indexOf('\r\n\r\n', start);
    const blockBytes = (end < 0 ? text.length : end + 4) - start;
    if (blockBytes > MAX_PART_HEADER_BYTES) throw new PartHeadersTooLong();
    if (end < 0) break; // a header block cut by the end of what is held: left as it is
    const headers = text.slice(start, end).split('\r\n').map(mendDisposition).join('\r\n');
    mended += text.slice(copiedTo, start) + headers;
    copiedTo = end;
  }
  return copiedTo === 0 ? body : Buffer.from(mended + text.slice(copiedTo), 'latin1');
}

/**
 * A Content-Disposition line whose quoted filename is its last parameter, with every double quote in the
 * value escaped: the value runs from the first `filename="` to the line's last quote. Any other line as it is.
 */
function mendDisposition(line: string): string {
  if (line.slice(0, DISPOSITION.length).toLowerCase() !== DISPOSITION) return line;
  let closing = line.length - 1;
  while (closing >= 0 && (line[closing] === ' ' || line[closing] === '\t')) closing--;
  if (line[closing] !== '"') return line;
  FILENAME_OPENS.lastIndex = DISPOSITION.length;
  const opens = FILENAME_OPENS.exec(line);
  if (!opens) return line;
  const valueStart = opens.index + opens[0].length;
  if (valueStart > closing) return line; // the opening quote is the line's last one: nothing closes it
  const name = line.slice(valueStart, closing);
  const escaped = name.replace(/(\\.)|"/g, (pair: string, quoted: string | undefined) => quoted ?? '\\"');
  return line.slice(0, valueStart) + escaped + line.slice(closing);
}
