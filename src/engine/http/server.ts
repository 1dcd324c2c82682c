import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { PATHS, type EndpointId } from '../../contract/endpoints';
import { checkMediaUid } from '../../contract/fields';
import { LOUDNESS_REPORT_HEADER, LOUDNESS_REPORT_PATH, LOUDNESS_REPORT_REFUSED } from '../../contract/loudness-report';
import { METADATA_WAIT_HEADER } from '../../contract/metadata-wait';
import { loggedPath } from './access-log';
import type { KeyChecker } from './auth';
import type { Capacity } from './capacity';
import type { Faults } from '../faults';
import type { AccessLogEntry } from './access-log';
import type { ServerLimits } from './server-limits';
import type { RateLimiter } from './rate-limit';
import { writeAnswer } from './write-answer';
import { whenAnswerGone } from './answer-gone';
import {
  HttpError,
  insufficientStorage,
  isDiskFull,
  sendErrorSafely,
  partUnavailable,
  unprocessable,
} from './http-error';
import { PartUnavailableError } from '../part-unavailable';
import { drainUnreadBody } from './unread-body';
import { answerHealth, HEALTH_PATH, type Health } from './health';
import { answerDeclaredExtensions } from './declared-extensions';
import { EXTENSIONS_PATH } from '../../contract/extensions';
import * as routes from './routes';

interface Route {
  /** The operation, or for an extension the operation whose rate limit it counts against. */
  endpoint: EndpointId;
  method: 'GET' | 'POST';
  uid?: string;
  /** A local-engine extension beyond the interface's operations. */
  extension?: 'loudness';
}

/** Which operation a request is, by method and path (the contract's PATHS); undefined for anything else. */
function match(method: string, pathname: string): Route | 'wrong-method' | undefined {
  const post = (endpoint: EndpointId): Route | 'wrong-method' =>
    method === 'POST' ? { endpoint, method: 'POST' } : 'wrong-method';
  if (pathname === PATHS.enhanceAudio) return post('enhanceAudio');
  if (pathname === PATHS.enhanceVideo) return post('enhanceVideo');
  if (pathname === PATHS.uploadMedia) return post('uploadMedia');
  const get = (endpoint: EndpointId, uid: string): Route | 'wrong-method' =>
    method === 'GET' || method === 'HEAD' ? { endpoint, method: 'GET', uid } : 'wrong-method';
  const metadataOf = uidIn(pathname, PATHS.metadata);
  if (metadataOf !== undefined) return get('getMetadata', metadataOf);
  const fileOf = uidIn(pathname, PATHS.file);
  if (fileOf !== undefined) return get('downloadFile', fileOf);
  const loudnessOf = uidIn(pathname, LOUDNESS_REPORT_PATH);
  if (loudnessOf !== undefined) {
    const route = get('getMetadata', loudnessOf);
    return route === 'wrong-method' ? route : { ...route, extension: 'loudness' };
  }
  return undefined;
}

/** Stands for the uid in a path the contract builds, to find where the uid goes. */
const UID_MARK = 'UID';

/** The uid when `pathname` is `pathOf(uid)` for some uid (one non-empty path segment); otherwise undefined. */
function uidIn(pathname: string, pathOf: (uid: string) => string): string | undefined {
  const [before, after] = pathOf(UID_MARK).split(UID_MARK);
  if (pathname.length <= before.length + after.length) return undefined;
  if (!pathname.startsWith(before) || !pathname.endsWith(after)) return undefined;
  const segment = pathname.slice(before.length, pathname.length - after.length);
  if (segment.includes('/')) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const isUpload = (endpoint: EndpointId) => endpoint === 'uploadMedia' || endpoint === 'enhanceVideo';

/** Seconds a caller beyond the connection cap should wait: most requests are short, and so is their connection. */
const CONNECTIONS_RETRY_AFTER_S = 5;
/** Seconds a key with all its uploads in progress should wait: a place frees as soon as any one of them ends. */
const UPLOADS_RETRY_AFTER_S = 2;

export interface ServerParts {
  keys: KeyChecker;
  limits: RateLimiter;
  faults: Faults;
  capacity: Capacity;
  serverLimits: ServerLimits;
  routes: routes.RouteContext;
  /** What GET /healthz asks, and what refuses new media while a shared part is away. */
  health: Health;
  log(entry: AccessLogEntry): void;
  /** The engine's error log; never throws. */
  logError: (line: string) => void;
}

function parseTarget(target: string | undefined): URL | undefined {
  try {
    return new URL(target ?? '/', 'http://engine.invalid');
  } catch {
    return undefined;
  }
}

/**
 * The engine's HTTP server, with its limits (server-limits.ts, for what each is and why):
 * - request head: at most `maxHeaderBytes` (Node answers 431) and `maxHeaderCount` fields (431 here);
 * - time: the head within `headersTimeoutMs` (Node answers 408 and closes: slowloris), nothing moving
 *   for `idleTimeoutMs` (408 and closed), `requestTimeoutMs` for a whole request (none by default: an
 *   honest multi-GiB upload on a slow line must not be cut), `keepAliveTimeoutMs` between requests;
 * - at once: `maxConnections` served (a request on a connection beyond gets 503 and Retry-After; past
 *   twice as many, connections are dropped unanswered so a flood cannot take every file descriptor)
 *   and `maxUploadsPerKey` uploads (503 and Retry-After).
 */
export function createEngineServer(parts: ServerParts): Server {
  const limits = parts.serverLimits;
  /** The request under way on each connection, for the idle timeout to answer. */
  const answering = new WeakMap<Socket, { req: IncomingMessage; res: ServerResponse }>();
  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // How often Node checks the two timeouts above: often enough that they hold to within a quarter.
      connectionsCheckingInterval: Math.min(5_000, Math.max(100, Math.floor(limits.headersTimeoutMs / 4))),
    },
    (req, res) => {
      const arrivedAt = Date.now();
      const started = process.hrtime.bigint();
      const url = parseTarget(req.url);
      answering.set(req.socket, { req, res });
      whenAnswerGone(res, req.socket, () => {
        if (answering.get(req.socket)?.res === res) answering.delete(req.socket);
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const aborted = !res.writableFinished;
        try {
          parts.log({
            at: arrivedAt,
            method: req.method ?? '?',
            path: url ? loggedPath(url) : '-',
            status: res.headersSent ? res.statusCode : 499,
            aborted,
            ms: Math.round(ms * 10) / 10,
          });
        } catch (err) {
          parts.logError(`the access log failed: ${(err as Error)?.message ?? String(err)}`);
        }
      });
      if (!url) {
        // A request target no URL parser accepts (e.g. `//[`): answer it, never let it end the process.
        sendErrorSafely(res, new HttpError(400, 'invalid request target'), parts.logError);
        return;
      }
      handle(req, res, url, parts).catch((err: unknown) => {
        const answer = asHttpError(err, parts.logError);
        sendErrorSafely(
          res,
          new HttpError(answer.status, answer.detail, drainUnreadBody(req, answer.headers)),
          parts.logError,
        );
      });
    },
  );
  server.maxHeadersCount = limits.maxHeaderCount + 1; // one more than allowed, so that going over shows
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.timeout = limits.idleTimeoutMs;
  server.maxConnections = limits.maxConnections * 2;
  server.on('connection', (socket: Socket) => {
    if (!parts.capacity.connected(socket)) refuseClientOverCap(socket, parts.capacity.maxConnectionsPerClient);
  });
  server.on('timeout', (socket: Socket) => {
    const current = answering.get(socket);
    if (!current || current.res.headersSent) {
      socket.destroy();
      return;
    }
    const { req, res } = current;
    sendErrorSafely(
      res,
      new HttpError(408, `the request stalled: nothing arrived for ${limits.idleTimeoutMs / 1000} s`, {
        connection: 'close',
      }),
      parts.logError,
    );
    // Once the answer is out, the unfinished request ends too, so its handler cleans up (a partial upload
    // is removed); a client that does not read the answer does not keep the connection either.
    res.once('finish', () => req.destroy());
    setTimeout(() => socket.destroy(), 1_000).unref();
  });
  return server;
}

/**
 * A connection beyond what its client address may hold: answered 503 with Retry-After before its request
 * is read (an HTTP client reads an early answer), and closed, so that it holds no place while it drips.
 */
function refuseClientOverCap(socket: Socket, cap: number): void {
  const body = JSON.stringify({
    detail: `this client has more than the ${cap} connections one client may hold open at once; retry later`,
  });
  socket.on('error', () => undefined); // the client may be gone already
  socket.end(
    `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `retry-after: ${CONNECTIONS_RETRY_AFTER_S}\r\nconnection: close\r\n\r\n${body}`,
  );
  // Whatever it sends meanwhile is not read; it goes in a moment whether it reads the answer or not.
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/** Any failure as an answer: an HttpError as it is, a full disk 507, a part away (storage, shared state) 503, anything else a logged 500. */
function asHttpError(err: unknown, logError: (line: string) => void): HttpError {
  if (err instanceof HttpError) return err;
  if (isDiskFull(err)) return insufficientStorage();
  if (err instanceof PartUnavailableError) return partUnavailable(err);
  logError(`internal error: ${(err as Error)?.stack ?? String(err)}`);
  return new HttpError(500, 'internal error');
}

async function handle(req: IncomingMessage, res: ServerResponse, url: URL, parts: ServerParts): Promise<void> {
  try {
    await handleRoute(req, res, url, parts);
  } catch (err) {
    // Every answer of the loudness route says what it is: one the route gave itself is marked already
    // (ready, pending, none, unknown-media); anything else was refused or failed before it looked.
    if (uidIn(url.pathname, LOUDNESS_REPORT_PATH) === undefined) throw err;
    throw asHttpError(err, parts.logError).withHeaders({ [LOUDNESS_REPORT_HEADER]: LOUDNESS_REPORT_REFUSED });
  }
}

/**
 * The loudness route counts only answers about a media it holds (ready, pending, none): a uid it refuses
 * (422) or does not know (404 unknown-media) gives its place back, as a 401 or a 429 never took one.
 */
function refusedByLoudnessRoute(route: Route, err: unknown): boolean {
  if (route.extension !== 'loudness' || !(err instanceof HttpError)) return false;
  return err.status === 422 || err.headers[LOUDNESS_REPORT_HEADER] === 'unknown-media';
}

async function handleRoute(req: IncomingMessage, res: ServerResponse, url: URL, parts: ServerParts): Promise<void> {
  const limits = parts.serverLimits;
  if (req.rawHeaders.length / 2 > limits.maxHeaderCount) {
    throw new HttpError(431, `the request has more than ${limits.maxHeaderCount} header fields`, {
      connection: 'close',
    });
  }
  if (url.pathname === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
    await answerHealth(res, parts.health);
    return;
  }
  if (url.pathname === EXTENSIONS_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
    answerDeclaredExtensions(res);
    return;
  }
  const route = match(req.method ?? '', url.pathname);
  if (route === undefined) throw new HttpError(404, 'Not Found');
  if (route === 'wrong-method') throw new HttpError(405, 'Method Not Allowed');
  const keyIndex = parts.keys.match(req.headers['x-api-key']);
  // Every answer of a rate-limited operation carries its headers: the count as it stands for an answer
  // refused before the operation, the count with this request for one it served.
  let headers = parts.limits.isLimited(route.endpoint) ? await parts.limits.peek(keyIndex, route.endpoint) : {};
  let giveBack: (() => Record<string, string> | Promise<Record<string, string>>) | undefined;
  try {
    if (keyIndex < 0)
      throw new HttpError(401, req.headers['x-api-key'] ? 'invalid API key' : 'missing X-API-Key header');
    if (parts.capacity.isBeyondCap(req.socket)) {
      throw new HttpError(
        503,
        `the service has more connections open than the ${parts.capacity.maxConnections} it serves at once; retry later`,
        {
          'retry-after': String(CONNECTIONS_RETRY_AFTER_S),
          connection: 'close',
        },
      );
    }
    const injected = parts.faults.errorStatus();
    if (injected)
      throw new HttpError(injected, `injected fault: ${injected === 500 ? 'internal error' : 'service unavailable'}`);
    if (route.method === 'POST') parts.health.assertAcceptingMedia();
    if (isUpload(route.endpoint)) {
      const release = parts.capacity.takeUpload(keyIndex);
      if (!release) {
        throw new HttpError(
          503,
          `this API key already has ${parts.capacity.maxUploadsPerKey} uploads in progress, the most the service takes at once; retry when one has finished`,
          {
            'retry-after': String(UPLOADS_RETRY_AFTER_S),
          },
        );
      }
      whenAnswerGone(res, req.socket, release);
    }
    if (parts.limits.isLimited(route.endpoint)) {
      const decision = await parts.limits.take(keyIndex, route.endpoint, parts.faults.takeForced429());
      headers = decision.headers;
      giveBack = decision.giveBack;
      if (!decision.allowed)
        throw new HttpError(429, 'rate limit exceeded: too many requests in the window, retry later', headers);
    }
    await dispatch(req, res, url, route, parts, declareWaiting(route, parts, headers), keyIndex);
  } catch (err) {
    if (giveBack && refusedByLoudnessRoute(route, err)) headers = await giveBack();
    throw asHttpError(err, parts.logError).withHeaders(declareWaiting(route, parts, headers));
  }
}

/** Every answer of the status operation says how long a `?wait=` may hold, when the engine offers it. */
function declareWaiting(route: Route, parts: ServerParts, headers: Record<string, string>): Record<string, string> {
  const waitS = parts.routes.metadataWaitS;
  if (route.endpoint !== 'getMetadata' || route.extension || waitS <= 0) return headers;
  return { ...headers, [METADATA_WAIT_HEADER]: String(waitS) };
}

async function dispatch(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  route: Route,
  parts: ServerParts,
  headers: Record<string, string>,
  keyIndex: number,
): Promise<void> {
  const ctx = parts.routes;
  if (route.uid !== undefined) {
    const issues = checkMediaUid(route.uid);
    if (issues.length > 0) throw unprocessable(issues);
  }
  let answer: routes.JsonAnswer;
  if (route.extension === 'loudness') {
    const report = await routes.loudness(route.uid!, ctx);
    await writeAnswer(
      res,
      200,
      { ...headers, ...report.headers, 'content-type': 'application/json' },
      report.body,
      parts.faults,
    );
    return;
  }
  switch (route.endpoint) {
    case 'enhanceAudio':
      answer = await routes.enhanceJson(req, ctx);
      break;
    case 'enhanceVideo':
      answer = await routes.upload(req, ctx, 'video');
      break;
    case 'uploadMedia':
      answer = await routes.upload(req, ctx, 'upload');
      break;
    case 'getMetadata': {
      // A held answer ends when the caller leaves (or the engine closes every connection as it stops).
      const left = new AbortController();
      whenAnswerGone(res, req.socket, () => left.abort());
      // A key holds at most so many waits at once; beyond, a wait is answered at once, as the media stands.
      // Such an answer declares no wait (0): the client polls plainly once rather than asking again at once.
      const hold = () => {
        const release = parts.capacity.holdWait(keyIndex);
        if (release) whenAnswerGone(res, req.socket, release);
        else headers = { ...headers, [METADATA_WAIT_HEADER]: '0' };
        return release !== undefined;
      };
      answer = await routes.metadata(route.uid!, url.searchParams, ctx, left.signal, hold);
      break;
    }
    case 'downloadFile':
      await routes.file(req, res, route.uid!, url.searchParams, ctx, headers);
      return;
  }
  const text = Buffer.isBuffer(answer.body) ? answer.body : Buffer.from(JSON.stringify(answer.body));
  await writeAnswer(res, answer.status, { ...headers, 'content-type': 'application/json' }, text, parts.faults);
}
