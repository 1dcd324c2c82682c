import type { ServerResponse } from 'node:http';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Faults } from '../faults';

/** A small answer whole, or a file's bytes: `length` of them, streamed from what `open` gives. */
export type Body = Buffer | { length: number; open(): Promise<Readable> };

/**
 * Writes an answer, passing it through the injected faults: a reset cuts the connection after half
 * the body, a drip sends the body slowly.
 */
export async function writeAnswer(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: Body,
  faults: Faults,
): Promise<void> {
  const length = body.length;
  // Opened before the head is written: a file the storage cannot give is still an error answer.
  const file = Buffer.isBuffer(body) ? undefined : await body.open();
  res.writeHead(status, { ...headers, 'content-length': String(length) });
  const stages: Transform[] = [];
  if (faults.resetResponse()) stages.push(cutAfter(Math.floor(length / 2), res));
  const speed = faults.dripSpeed();
  if (speed !== undefined) stages.push(drip(speed));
  if (Buffer.isBuffer(body) && stages.length === 0) {
    res.end(body); // the common case: a small JSON answer, no stream machinery
    return;
  }
  const source = file ?? Readable.from([body as Buffer]);
  try {
    await pipeline([source, ...stages, res] as unknown as NodeJS.ReadWriteStream[]);
  } catch {
    res.destroy();
  }
}

function cutAfter(bytes: number, res: ServerResponse): Transform {
  let sent = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, callback) {
      const room = bytes - sent;
      sent += chunk.length;
      if (room > chunk.length) return callback(null, chunk);
      this.push(chunk.subarray(0, Math.max(0, room)));
      // Let the first half reach the socket, then drop the connection as a failing network would.
      setTimeout(() => res.socket?.destroy(), 20);
    },
  });
}

function drip(bytesPerSecond: number): Transform {
  const piece = Math.max(1, Math.floor(bytesPerSecond / 10));
  return new Transform({
    transform(chunk: Buffer, _enc, callback) {
      const pieces: Buffer[] = [];
      for (let i = 0; i < chunk.length; i += piece) pieces.push(chunk.subarray(i, i + piece));
      // Each piece leaves only after the time it takes at the dripping speed.
      const next = () => {
        const p = pieces.shift();
        if (!p) return callback();
        setTimeout(
          () => {
            this.push(p);
            next();
          },
          (p.length / bytesPerSecond) * 1000,
        );
      };
      next();
    },
  });
}
