import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { EndpointId } from '../contract/endpoints';
import { checkMediaUid } from '../contract/fields';
import type { KeyChecker } from './auth';
import type { Faults } from './faults';
import type { AccessLogEntry } from './options';
import type { RateLimits } from './rate-limit';
import { respond } from './respond';
import { HttpError, sendError, sendJson, unprocessable } from './responses';
import { drainUnreadBody } from './unread-body';
import * as routes from './routes';

interface Route {
  endpoint: EndpointId;
  method: 'GET' | 'POST';
  uid?: string;
}

/** Which operation a request is, by method and path; undefined for anything else. */
function match(method: string, pathname: string): Route | 'wrong-method' | undefined {
  const post = (endpoint: EndpointId): Route | 'wrong-method' => (method === 'POST' ? { endpoint, method: 'POST' } : 'wrong-method');
  if (pathname === '/v1/media/enhance-json') return post('enhanceAudio');
  if (pathname === '/v1/videos') return post('enhanceVideo');
  if (pathname === '/v2/medias') return post('uploadMedia');
  const media = /^\/v2\/medias\/([^/]+)\/(metadata|file)$/.exec(pathname);
  if (!media) return undefined;
  if (method !== 'GET' && method !== 'HEAD') return 'wrong-method';
  let uid: string;
  try {
    uid = decodeURIComponent(media[1]);
  } catch {
    uid = media[1];
  }
  return { endpoint: media[2] === 'metadata' ? 'getMetadata' : 'downloadFile', method: 'GET', uid };
}

export interface ServerParts {
  keys: KeyChecker;
  limits: RateLimits;
  faults: Faults;
  routes: routes.RouteContext;
  log(entry: AccessLogEntry): void;
}

function parseTarget(target: string | undefined): URL | undefined {
  try {
    return new URL(target ?? '/', 'http://engine.invalid');
  } catch {
    return undefined;
  }
}

export function createEngineServer(parts: ServerParts): Server {
  const server = createServer((req, res) => {
    const arrivedAt = Date.now();
    const started = process.hrtime.bigint();
    const url = parseTarget(req.url);
    if (!url) {
      // A request target no URL parser accepts (e.g. `//[`): answer it, never let it end the process.
      sendJson(res, 400, { detail: 'invalid request target' });
      return;
    }
    res.on('close', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      parts.log({ at: arrivedAt, method: req.method ?? '?', path: url.pathname + url.search, status: res.statusCode, ms: Math.round(ms * 10) / 10 });
    });
    handle(req, res, url, parts).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof HttpError) sendError(res, new HttpError(err.status, err.detail, drainUnreadBody(req, err.headers)));
      else sendJson(res, 500, { detail: 'internal error' }, drainUnreadBody(req, {}));
    });
  });
  server.keepAliveTimeout = 15_000;
  return server;
}

async function handle(req: IncomingMessage, res: ServerResponse, url: URL, parts: ServerParts): Promise<void> {
  const route = match(req.method ?? '', url.pathname);
  if (route === undefined) throw new HttpError(404, 'Not Found');
  if (route === 'wrong-method') throw new HttpError(405, 'Method Not Allowed');
  const keyIndex = parts.keys.match(req.headers['x-api-key']);
  if (keyIndex < 0) throw new HttpError(401, req.headers['x-api-key'] ? 'invalid API key' : 'missing X-API-Key header');

  const injected = parts.faults.errorStatus();
  if (injected) throw new HttpError(injected, `injected fault: ${injected === 500 ? 'internal error' : 'service unavailable'}`);

  let headers: Record<string, string> = {};
  if (parts.limits.isLimited(route.endpoint)) {
    const decision = parts.limits.take(keyIndex, route.endpoint, parts.faults.takeForced429());
    headers = decision.headers;
    if (!decision.allowed) throw new HttpError(429, 'rate limit exceeded: too many requests in the window, retry later', headers);
  }
  try {
    await dispatch(req, res, url, route, parts, headers);
  } catch (err) {
    // Every answer of a rate-limited operation carries its headers, errors included.
    if (err instanceof HttpError) throw new HttpError(err.status, err.detail, { ...headers, ...err.headers });
    throw err;
  }
}

async function dispatch(req: IncomingMessage, res: ServerResponse, url: URL, route: Route, parts: ServerParts, headers: Record<string, string>): Promise<void> {
  const ctx = parts.routes;
  if (route.uid !== undefined) {
    const issues = checkMediaUid(route.uid);
    if (issues.length > 0) throw unprocessable(issues);
  }
  let answer: routes.JsonAnswer;
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
    case 'getMetadata':
      answer = routes.metadata(route.uid!, ctx);
      break;
    case 'downloadFile':
      await routes.file(req, res, route.uid!, url.searchParams, ctx, headers);
      return;
  }
  const text = Buffer.isBuffer(answer.body) ? answer.body : Buffer.from(JSON.stringify(answer.body));
  await respond(res, answer.status, { ...headers, 'content-type': 'application/json' }, text, parts.faults);
}
