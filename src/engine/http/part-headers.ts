// Part headers as some clients write them, made readable to the multipart parser. A client that puts a
// file name between quotes as it is (`filename="say "hi".wav"`) sends a Content-Disposition busboy cannot
// read: it skips the part, and the upload was refused as having no file (`file: field required`). The
// part headers among a body's first bytes are mended: a double quote inside a filename value is escaped
// (a quoted-pair, as curl sends it), and the parser reads the name as the client meant it.
import { Transform } from 'node:stream';

/** How far into a body part headers are mended: the file part and its settings part come first. */
const MENDED_BYTES = 128 * 1024;

/** A Content-Disposition line whose quoted filename is its last parameter: the value runs to the line's last quote. */
const DISPOSITION_FILENAME = /^(content-disposition:[^\r\n]*?;[ \t]*filename=")([^\r\n]*)"([ \t]*)(?=\r\n|$)/gim;

/** The boundary of a multipart Content-Type, or undefined. */
export function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match ? (match[1] ?? match[2]) : undefined;
}

/** Passes a multipart body on, its first MENDED_BYTES held back until their part headers are mended. */
export function partHeaderMender(boundary: string): Transform {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let passing = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (passing) return callback(null, chunk);
      held.push(chunk);
      heldBytes += chunk.length;
      if (heldBytes < MENDED_BYTES) return callback();
      passing = true;
      const head = mendPartHeaders(Buffer.concat(held), boundary);
      held = [];
      callback(null, head);
    },
    flush(callback) {
      callback(null, passing ? undefined : mendPartHeaders(Buffer.concat(held), boundary));
    },
  });
}

/** `body` with the filename of each whole part header block in it escaped; every other byte as it was. */
export function mendPartHeaders(body: Buffer, boundary: string): Buffer {
  const text = body.toString('latin1'); // one char per byte: the bytes come back unchanged
  const delimiter = `--${boundary}\r\n`;
  let mended = '';
  let copiedTo = 0;
  for (let found = text.indexOf(delimiter); found >= 0; found = text.indexOf(delimiter, found + 1)) {
    // A delimiter starts the body or a line; the same bytes inside a part's content are not one.
    if (found > 0 && text.slice(found - 2, found) !== '\r\n') continue;
    const start = found + delimiter.length;
    const end = text.indexOf('\r\n\r\n', start);
    if (end < 0) break; // a header block cut by the end of what is held: left as it is
    const headers = text
      .slice(start, end)
      .replace(DISPOSITION_FILENAME, (_line, before: string, name: string, after: string) => {
        const escaped = name.replace(/(\\.)|"/g, (pair: string, quoted: string | undefined) => quoted ?? '\\"');
        return `${before}${escaped}"${after}`;
      });
    mended += text.slice(copiedTo, start) + headers;
    copiedTo = end;
  }
  return copiedTo === 0 ? body : Buffer.from(mended + text.slice(copiedTo), 'latin1');
}
