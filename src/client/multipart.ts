import { createReadStream, promises as fsp } from 'node:fs';
import { basename } from 'node:path';
import { Readable, Transform } from 'node:stream';
import FormData from 'form-data';
import { MediaEnhanceError } from './errors';
import type { RequestBody } from './transport';

/** Reads of an uploaded file: big enough for few system calls, small enough for flat memory. */
const READ_CHUNK = 256 * 1024;

/** A file to upload: a path on disk, the bytes themselves, or a readable stream (which can be sent once only). */
export type FileInput = string | Buffer | Uint8Array | NodeJS.ReadableStream;

export interface FileSource {
  fileName: string;
  /** Bytes, when known before sending. */
  size?: number;
  /** A path or Buffer can be read again for a retry; a stream cannot. */
  replayable: boolean;
  open(): Buffer | NodeJS.ReadableStream;
}

/** Checks the input and learns its name and size; a missing path fails here, before any request. */
export async function fileSource(file: FileInput, fileName: string | undefined, field = 'file'): Promise<FileSource> {
  if (typeof file === 'string') {
    let stat;
    try {
      stat = await fsp.stat(file);
    } catch (err) {
      throw new MediaEnhanceError('VALIDATION', `${field}: cannot read "${file}": ${(err as Error).message}`, {
        details: [`${field}: no readable file at "${file}"`],
      });
    }
    if (!stat.isFile())
      throw new MediaEnhanceError('VALIDATION', `${field}: "${file}" is not a file`, {
        details: [`${field}: "${file}" is not a file`],
      });
    return {
      fileName: fileName || basename(file),
      size: stat.size,
      replayable: true,
      open: () => createReadStream(file, { highWaterMark: READ_CHUNK }),
    };
  }
  if (Buffer.isBuffer(file) || file instanceof Uint8Array) {
    const bytes = Buffer.isBuffer(file) ? file : Buffer.from(file.buffer, file.byteOffset, file.byteLength);
    if (bytes.length === 0)
      throw new MediaEnhanceError('VALIDATION', `${field}: the file is empty (0 bytes)`, {
        details: [`${field}: the file is empty`],
      });
    return { fileName: fileName || 'media', size: bytes.length, replayable: true, open: () => bytes };
  }
  if (file && typeof file.pipe === 'function') {
    const streamPath = (file as { path?: unknown }).path;
    const name = fileName || (typeof streamPath === 'string' ? basename(streamPath) : 'media');
    let used = false;
    return {
      fileName: name,
      replayable: false,
      open: () => {
        if (used)
          throw new MediaEnhanceError(
            'VALIDATION',
            `${field}: a stream can be sent only once; pass a path or a Buffer`,
          );
        used = true;
        return file;
      },
    };
  }
  throw new MediaEnhanceError(
    'VALIDATION',
    `${field}: a file path, a Buffer or a readable stream is required (got ${describeType(file)})`,
    {
      details: [`${field}: a file path, a Buffer or a readable stream is required`],
    },
  );
}

/**
 * A multipart/form-data body with the file part first and the given text parts after, streamed,
 * with a Content-Length whenever the file's size is known. `onBytes` counts the bytes sent.
 */
export function multipartBody(
  source: FileSource,
  fields: Record<string, string | undefined>,
  onBytes?: (sent: number, total?: number) => void,
): RequestBody {
  const form = new FormData();
  const content = source.open();
  form.append('file', content, {
    filename: source.fileName,
    contentType: 'application/octet-stream',
    knownLength: source.size,
  });
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, value);
  const headers: Record<string, string> = { ...(form.getHeaders() as Record<string, string>) };
  let total: number | undefined;
  if (source.size !== undefined) {
    total = form.getLengthSync();
    headers['content-length'] = String(total);
  }
  let sent = 0;
  const counter = new Transform({
    highWaterMark: READ_CHUNK,
    transform(chunk: Buffer, _enc, callback) {
      sent += chunk.length;
      onBytes?.(sent, total);
      callback(null, chunk);
    },
  });
  // form-data is an old-style stream; piping it into the counter gives undici a modern Readable.
  const body = form.pipe(counter);
  form.on('error', (err) => body.destroy(err));
  if (typeof (content as Readable).on === 'function' && !Buffer.isBuffer(content)) {
    const file = content as Readable;
    file.on('error', (err) => body.destroy(err));
    // An aborted request destroys the body; the file it was reading must close too, or its descriptor stays open.
    body.once('close', () => {
      if (!file.destroyed && !file.readableEnded) file.destroy();
    });
  }
  return { body, headers };
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}
