import { once } from 'node:events';
import { createWriteStream, promises as fsp, type WriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { HttpError, unprocessable } from './responses';
import { SNIFF_BYTES } from './media-type';

export interface ReceivedUpload {
  /** The file as written to disk (an incoming path). */
  path: string;
  fileName: string;
  size: number;
  /** The first bytes, to tell what the file is. */
  head: Buffer;
  /** Text parts by name. */
  fields: Record<string, string>;
}

/**
 * Streams a multipart body to disk: the `file` part goes to `path` as it arrives (never whole in memory).
 * A body over `maxBytes` is a 413, a body without `file`, malformed or cut off is a 422; in every failure
 * the partial file is deleted.
 */
export async function receiveUpload(req: IncomingMessage, path: string, maxBytes: number): Promise<ReceivedUpload> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(contentType)) {
    throw unprocessable([{ loc: ['header', 'content-type'], msg: 'multipart/form-data is required', type: 'value_error.content_type', input: contentType }]);
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes + 64 * 1024) throw tooLarge(maxBytes);

  let parser: busboy.Busboy;
  try {
    // File names arrive as UTF-8, as browsers and our client send them (RFC 7578); busboy's default
    // reads them as Latin-1, which garbles every accent. `filename*` is still understood.
    parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 1, fileSize: maxBytes, fields: 10, fieldSize: 64 * 1024 } });
  } catch (err) {
    throw malformed(err);
  }

  return new Promise<ReceivedUpload>((resolve, reject) => {
    const fields: Record<string, string> = {};
    let out: WriteStream | undefined;
    let written: Promise<{ fileName: string; size: number; head: Buffer }> | undefined;
    let settled = false;

    const fail = (err: HttpError) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.resume(); // discard the rest, so the answer can still reach the client
      // The file may still be opening: remove it only once it is closed, or the open would create it again.
      const closed = out && !out.closed ? once(out, 'close').catch(() => undefined) : Promise.resolve();
      out?.destroy();
      void Promise.all([closed, written?.catch(() => undefined)])
        .then(() => fsp.rm(path, { force: true }))
        .then(() => reject(err));
    };

    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || written) {
        stream.resume();
        return;
      }
      let size = 0;
      let head = Buffer.alloc(0);
      const counter = new Transform({
        transform(chunk: Buffer, _enc, callback) {
          size += chunk.length;
          if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
          callback(null, chunk);
        },
      });
      stream.on('limit', () => fail(tooLarge(maxBytes)));
      out = createWriteStream(path);
      written = pipeline(stream, counter, out).then(() => ({ fileName: info.filename ?? 'media', size, head }));
      written.catch((err: unknown) => fail(malformed(err)));
    });
    parser.on('error', (err) => fail(malformed(err)));
    parser.on('close', () => {
      if (settled) return;
      if (!written) return fail(unprocessable([{ loc: ['body', 'file'], msg: 'field required', type: 'value_error.missing' }]));
      written.then(
        (file) => {
          if (settled) return;
          settled = true;
          resolve({ path, fields, ...file });
        },
        (err: unknown) => fail(malformed(err)),
      );
    });
    req.on('close', () => {
      if (!req.complete) fail(malformed(new Error('the request was cut off before its end')));
    });
    req.pipe(parser);
  });
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `the file is larger than the ${maxBytes} bytes this service accepts`, { connection: 'close' });
}

function malformed(err: unknown): HttpError {
  return unprocessable([{ loc: ['body'], msg: `malformed or truncated multipart body: ${(err as Error)?.message ?? String(err)}`, type: 'value_error.multipart' }]);
}
