import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { boundaryOf, partHeaderMender, PartHeadersTooLong } from './part-headers';
import { HttpError, isDiskFull, insufficientStorage, partUnavailable, unprocessable } from './http-error';
import { SNIFF_BYTES } from '../storage/media-type';
import { FILE_WRITE_BUFFER } from '../storage/local-media-files';
import { PartUnavailableError } from '../part-unavailable';
import type { IncomingFile } from '../storage/media-files';

export interface ReceivedUpload {
  /** The file as stored, not yet any media's input. */
  incoming: IncomingFile;
  fileName: string;
  size: number;
  /** The first bytes, to tell what the file is. */
  head: Buffer;
  /** Text parts by name (a Map: a part named `__proto__` or `constructor` is just a name). */
  fields: Map<string, string>;
}

/**
 * What one upload form may hold: the file, its settings part and a few parts a client may add. Any
 * limit reached refuses the upload, naming it: a part dropped unseen could be the settings.
 */
const FORM = { files: 1, fields: 10, fieldSize: 64 * 1024, fieldNameSize: 100 } as const;
/** busboy's `parts` event fires when the count is reached, not passed: one more than the form may hold. */
const PARTS_REACHED = FORM.files + FORM.fields + 1;
/** What a body may hold beside the file's bytes: part headers, the settings part, the delimiters. */
const FORM_ALLOWANCE_BYTES = 64 * 1024;
/**
 * Streams a multipart body to the storage: the `file` part goes to an incoming file (`store()` starts
 * one) as it arrives, never whole in memory. A body over `maxBytes` is a 413, a body without `file`,
 * malformed, cut off or over a form limit is a 422 (a text part over its size a 413), a full disk a 507,
 * a storage that does not answer a 503; in every failure what was stored of the file is deleted.
 */
export async function receiveUpload(
  req: IncomingMessage,
  store: () => IncomingFile,
  maxBytes: number,
): Promise<ReceivedUpload> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(contentType)) {
    throw unprocessable([
      {
        loc: ['header', 'content-type'],
        msg: 'multipart/form-data is required',
        type: 'value_error.content_type',
        input: contentType,
      },
    ]);
  }
  const maxBodyBytes = maxBytes + FORM_ALLOWANCE_BYTES;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBodyBytes) throw bodyTooLarge(maxBytes);

  let parser: busboy.Busboy;
  try {
    // File names arrive as UTF-8, as browsers and our client send them (RFC 7578); busboy's default
    // reads them as Latin-1, which garbles every accent. `filename*` is still understood.
    parser = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      limits: { ...FORM, parts: PARTS_REACHED, fileSize: maxBytes },
    });
  } catch (err) {
    throw malformed(err);
  }

  // Between the request and the parser: the part headers mended (part-headers.ts).
  const boundary = boundaryOf(contentType);
  const mender = boundary ? partHeaderMender(boundary) : undefined;

  return new Promise<ReceivedUpload>((resolve, reject) => {
    const fields = new Map<string, string>();
    let incoming: IncomingFile | undefined;
    let written: Promise<{ fileName: string; size: number; head: Buffer }> | undefined;
    let settled = false;

    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      (mender ?? req).unpipe(parser);
      if (mender) req.unpipe(mender);
      req.resume(); // discard the rest, so the answer can still reach the client
      void Promise.all([incoming?.discard(), written?.catch(() => undefined)])
        .catch(() => undefined)
        .then(() => reject(err));
    };

    parser.on('field', (name, value, info) => {
      if (info.nameTruncated)
        return fail(overLimit(['body'], `a part name is longer than ${FORM.fieldNameSize} characters`));
      if (info.valueTruncated)
        return fail(
          new HttpError(
            413,
            `the form part "${name}" is larger than the ${FORM.fieldSize} bytes a text part may hold`,
            { connection: 'close' },
          ),
        );
      if (fields.has(name))
        return fail(
          unprocessable([
            {
              loc: ['body', name],
              msg: 'given more than once; one value is required',
              type: 'value_error.multipart.repeated',
            },
          ]),
        );
      fields.set(name, value);
    });
    parser.on('fieldsLimit', () => fail(overLimit(['body'], `the form has more than ${FORM.fields} text parts`)));
    parser.on('filesLimit', () => fail(overLimit(['body', 'file'], `the form has more than ${FORM.files} file part`)));
    parser.on('partsLimit', () =>
      fail(
        overLimit(
          ['body'],
          `the form has more than ${PARTS_REACHED - 1} parts (${FORM.files} file and ${FORM.fields} text parts)`,
        ),
      ),
    );
    parser.on('file', (name, stream, info) => {
      // After a refusal the parser may still hand over a file part from data it already holds: it is
      // drained, never written, or it would be left in .incoming with nobody to remove it.
      if (settled || name !== 'file' || written) {
        stream.resume();
        return;
      }
      let size = 0;
      let head = Buffer.alloc(0);
      const counter = new Transform({
        highWaterMark: FILE_WRITE_BUFFER,
        transform(chunk: Buffer, _enc, callback) {
          size += chunk.length;
          if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
          callback(null, chunk);
        },
      });
      stream.on('limit', () => fail(tooLarge(maxBytes)));
      const file = (incoming = store());
      written = pipeline(stream, counter, file.stream)
        .catch((err: unknown) => {
          // A stream the storage failed ends as aborted: what happened is the storage's failure.
          throw file.failure() ?? err;
        })
        .then(() => file.stored())
        .then(() => ({ fileName: info.filename ?? 'media', size, head }));
      written.catch((err: unknown) => fail(notStored(err)));
    });
    parser.on('error', (err) => fail(malformed(err)));
    mender?.on('error', (err) =>
      fail(
        err instanceof PartHeadersTooLong
          ? unprocessable([{ loc: ['body'], msg: err.message, type: 'value_error.multipart.limit' }])
          : malformed(err),
      ),
    );
    parser.on('close', () => {
      if (settled) return;
      if (!written)
        return fail(unprocessable([{ loc: ['body', 'file'], msg: 'field required', type: 'value_error.missing' }]));
      written.then(
        (file) => {
          if (settled) return;
          settled = true;
          resolve({ incoming: incoming!, fields, ...file });
        },
        (err: unknown) => fail(notStored(err)),
      );
    });
    req.on('close', () => {
      if (!req.complete) fail(malformed(new Error('the request was cut off before its end')));
    });
    // A body of undeclared length (chunked) is counted as it comes: the parser bounds only the file part,
    // and would read a preamble or a part it skips without end.
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
      if (bodyBytes > maxBodyBytes) fail(bodyTooLarge(maxBytes));
    });
    (mender ? req.pipe(mender) : req).pipe(parser);
  });
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `the file is larger than the ${maxBytes} bytes this service accepts`, {
    connection: 'close',
  });
}

/** The whole body counted (declared or as it came), before any file part was seen to be over. */
function bodyTooLarge(maxBytes: number): HttpError {
  return new HttpError(
    413,
    `the request body is larger than the ${maxBytes + FORM_ALLOWANCE_BYTES} bytes this service accepts: a file of up to ${maxBytes} bytes and ${FORM_ALLOWANCE_BYTES} for the rest of the form`,
    { connection: 'close' },
  );
}

function overLimit(loc: string[], what: string): HttpError {
  return unprocessable([
    {
      loc,
      msg: `${what}, more than this service accepts: send the file and its settings part only`,
      type: 'value_error.multipart.limit',
    },
  ]);
}

/**
 * Why the file part did not reach the storage: the disk is full (507), the storage does not answer (503),
 * another failure of the disk (passed on as it is: an internal fault, 500), or a body malformed or cut off (422).
 */
function notStored(err: unknown): unknown {
  if (isDiskFull(err)) return insufficientStorage();
  if (err instanceof PartUnavailableError) return partUnavailable(err);
  if (typeof (err as NodeJS.ErrnoException)?.syscall === 'string') return err;
  return malformed(err);
}

function malformed(err: unknown): HttpError {
  return unprocessable([
    {
      loc: ['body'],
      msg: `malformed or truncated multipart body: ${(err as Error)?.message ?? String(err)}`,
      type: 'value_error.multipart',
    },
  ]);
}
