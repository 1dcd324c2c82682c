// The sidebar's admin routes, on Node-RED's admin app (so under httpAdminRoot, behind adminAuth), each
// behind a permission of the package's own:
//   GET  /media-enhance/state                 the whole sidebar state (media-enhance.read)
//   GET  /media-enhance/results/:id           a result with its media's metadata and loudness report (media-enhance.read)
//   GET  /media-enhance/media/:uid/file?step= the media's ENHANCED (default) or PRE file, as an attachment;
//                                             only a media this instance handled, never a path (media-enhance.read)
//   POST /media-enhance/results/clear         empties the results (media-enhance.write, as deploying needs);
//                                             a JSON body only
// Every route refuses a browser's cross-origin request (same-origin.ts). The editor's downloads have a
// small share of their own and never wait in the flows' line (download-share.ts).
// The service's key stays in the runtime: the editor only ever talks to these routes.
import { pipeline } from 'node:stream/promises';
import type { DownloadedStream } from '../client/download';
import { MediaEnhanceError } from '../client/errors';
import { attachmentDisposition } from '../contract/attachment';
import { checkMediaUid, checkStep, DEFAULT_STEP, type Step } from '../contract/fields';
import type { AdminHandler, AdminResponse, PluginRed } from './plugin-api';
import { SidebarDownloadShare } from './download-share';
import type { SidebarRegistry } from './registry';
import { jsonBodyOnly, sameOriginOnly } from './same-origin';
import type { ResultDetailCache } from './result-details';

export const READ_PERMISSION = 'media-enhance.read';
export const WRITE_PERMISSION = 'media-enhance.write';

export function installAdminRoutes(
  RED: Pick<PluginRed, 'httpAdmin' | 'auth'>,
  registry: SidebarRegistry,
  details: ResultDetailCache,
  downloads = new SidebarDownloadShare(),
): void {
  const read = RED.auth.needsPermission(READ_PERMISSION);
  const write = RED.auth.needsPermission(WRITE_PERMISSION);

  RED.httpAdmin.get('/media-enhance/state', sameOriginOnly, read, (_req, res) => {
    res.json(registry.snapshot());
  });

  RED.httpAdmin.get(
    '/media-enhance/results/:id',
    sameOriginOnly,
    read,
    answering(async (req, res) => {
      const found = await details.details(req.params.id);
      if (!found) return notFound(res);
      res.json(found);
    }),
  );

  RED.httpAdmin.get(
    '/media-enhance/media/:uid/file',
    sameOriginOnly,
    read,
    answering(async (req, res) => {
      const { uid } = req.params;
      // Only a media uid this instance handled: anything else (a path, another's uid) is not found.
      if (checkMediaUid(uid).length > 0 || !registry.handled(uid)) return notFound(res);
      const step = req.query.step === undefined ? DEFAULT_STEP : req.query.step;
      if (checkStep(step).length > 0) return res.status(400).json({ error: 'step must be ENHANCED or PRE' });
      const client = registry.clientOf(registry.serviceOfMedia(uid));
      if (!client) return notFound(res);
      const share = downloads.take(client.rateLimit('downloadFile'));
      if ('retryAfterS' in share) {
        return busy(
          res,
          share.retryAfterS,
          'the editor has a small share of the downloads (at most ' +
            `${downloads.atOnce} at once and a tenth of the window), so that the flows' downloads go first; retry later`,
        );
      }
      const cancel = new AbortController();
      res.on('close', () => {
        share.release();
        cancel.abort();
      });
      let file: DownloadedStream;
      try {
        // Never in the flows' line: a place now, or 429 at once.
        file = await client.downloadFile(uid, { step: step as Step, signal: cancel.signal, waitForPlace: false });
      } catch (err) {
        const noPlace = err instanceof MediaEnhanceError && err.code === 'RATE_LIMITED' && err.status === undefined;
        share.release(!noPlace);
        if (!noPlace) throw err;
        const until = client.rateLimit('downloadFile').rateLimitedUntil;
        const seconds = until === null ? 1 : Math.max(1, Math.ceil((until - Date.now()) / 1000));
        return busy(res, seconds, "the service's download window is full or flows wait for a place; retry later");
      }
      res.setHeader('Content-Type', file.contentType);
      res.setHeader('Content-Disposition', attachmentDisposition(file.fileName));
      if (file.size !== undefined) res.setHeader('Content-Length', String(file.size));
      await pipeline(file.stream, res);
    }),
  );

  RED.httpAdmin.post('/media-enhance/results/clear', sameOriginOnly, write, jsonBodyOnly, (_req, res) => {
    registry.clearResults();
    details.clear();
    res.status(204).end();
  });
}

/** Runs an async route; a failure answers with a status that says what kind (never a stack, never a key). */
function answering(route: (...args: Parameters<AdminHandler>) => Promise<unknown>): AdminHandler {
  return (req, res, next) => {
    route(req, res, next).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const code = err instanceof MediaEnhanceError ? err.code : undefined;
      const status = code === 'NOT_FOUND' ? 404 : code === 'NOT_READY' ? 409 : code === 'RATE_LIMITED' ? 429 : 502;
      res.status(status).json({ error: err instanceof Error ? err.message : String(err), code: code ?? null });
    });
  };
}

/** 429 with Retry-After: the editor may ask again, later. */
function busy(res: AdminResponse, retryAfterSeconds: number, why: string): void {
  res.setHeader('Retry-After', String(retryAfterSeconds));
  res.status(429).json({ error: why, code: 'RATE_LIMITED' });
}

function notFound(res: AdminResponse): void {
  res.status(404).json({ error: 'not found' });
}
