// The package's admin routes answer only the editor's own pages. With adminAuth off Node-RED's admin app
// lets any origin in, so without this any web page open in a browser that can reach the editor could
// read the state, download recordings and clear results. A browser says where a request comes from in
// Sec-Fetch-Site (same-origin, or none for an address typed by the user) and in Origin (which must name
// the host the request was sent to). A request without either (curl, a script) is not a browser's
// cross-site request, and adminAuth is what guards against those. X-Forwarded-Host counts only from a
// proxy the user told Node-RED to trust.
import type { AdminHandler, AdminRequest, AdminResponse } from './plugin-api';

const ALLOWED_FETCH_SITES = new Set(['same-origin', 'none']);

export const sameOriginOnly: AdminHandler = (req, res, next) => {
  const refusal = crossOrigin(req);
  if (refusal) return void refuse(res, refusal);
  next();
};

/**
 * A state-changing request must also be one a page cannot send across origins without the runtime's
 * consent (a CORS preflight): a JSON body, which no HTML form can send.
 */
export const jsonBodyOnly: AdminHandler = (req, res, next) => {
  const type = headerOf(req, 'content-type')?.split(';')[0].trim().toLowerCase();
  if (type !== 'application/json')
    return void res
      .status(415)
      .json({ error: `Content-Type must be application/json (got ${JSON.stringify(type ?? null)})` });
  next();
};

/** Why the request is refused as cross-origin, or undefined. */
function crossOrigin(req: AdminRequest): string | undefined {
  const site = headerOf(req, 'sec-fetch-site');
  if (site !== undefined && !ALLOWED_FETCH_SITES.has(site.toLowerCase()))
    return `a ${site} request (Sec-Fetch-Site): only the editor's own pages may use these routes`;
  const origin = headerOf(req, 'origin');
  if (origin === undefined) return undefined;
  let host: string;
  try {
    host = new URL(origin).host.toLowerCase();
  } catch {
    return `a request from origin ${JSON.stringify(origin.slice(0, 100))}: only the editor's own pages may use these routes`;
  }
  const served = [headerOf(req, 'host'), forwardedHost(req)];
  if (served.some((name) => name !== undefined && name.toLowerCase() === host)) return undefined;
  return `a request from origin ${JSON.stringify(origin.slice(0, 100))}, not the editor's: only the editor's own pages may use these routes`;
}

/**
 * Behind a proxy the editor's host is the one the proxy was asked for (X-Forwarded-Host); any client can
 * send that header, so it counts only when the user told Node-RED to trust a proxy (its setting
 * `httpServerOptions: { 'trust proxy': ... }`, express's own) and the request came from one it trusts,
 * as express's `req.hostname` decides.
 */
function forwardedHost(req: AdminRequest): string | undefined {
  const trusts = (req as ExpressRequest).app?.get?.('trust proxy fn') as TrustProxy | undefined;
  const from = req.socket?.remoteAddress;
  if (typeof trusts !== 'function' || from === undefined || !trusts(from, 0)) return undefined;
  return headerOf(req, 'x-forwarded-host')?.split(',')[0].trim();
}

/** Express's compiled `trust proxy` setting: whether the hop `index` from the server, at `address`, is trusted. */
type TrustProxy = (address: string, index: number) => boolean;

/** What express adds to a request: its app, whose settings say which proxies are trusted. */
interface ExpressRequest extends AdminRequest {
  app?: { get?(setting: string): unknown };
}

function headerOf(req: AdminRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function refuse(res: AdminResponse, why: string): void {
  res.status(403).json({ error: `refused ${why}` });
}
