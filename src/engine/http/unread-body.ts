// An answer given before the request body was read (413, 401, a fault): the client is still sending.
// Closing at once would leave its bytes unread in our socket, and the kernel then resets the connection,
// which can destroy our answer before the client reads it: the client sees EPIPE instead of a 413.
// So the rest of the body is read and thrown away for a bounded time, and only then is the socket cut.
import type { IncomingMessage } from 'node:http';

/** How long a sender that keeps sending after its answer is listened to before the connection is cut. */
const DRAIN_MS = 5_000;

/**
 * Call before writing an answer; drops a `connection: close` the caller asked for while the body is
 * unread, and closes the connection once the body has been read instead (a connection refused for
 * being beyond the cap must not be kept alive for the next request, which it would refuse again).
 */
export function drainUnreadBody(req: IncomingMessage, headers: Record<string, string>): Record<string, string> {
  if (req.complete || req.destroyed) return headers;
  const { connection, ...rest } = headers;
  req.resume();
  const cut = setTimeout(() => req.socket.destroy(), DRAIN_MS);
  cut.unref();
  req.once('end', () => {
    clearTimeout(cut);
    // The answer was written before the body ended; end() sends what is still buffered, then closes.
    if (connection === 'close') setImmediate(() => req.socket.end());
  });
  req.once('close', () => clearTimeout(cut));
  return rest;
}
