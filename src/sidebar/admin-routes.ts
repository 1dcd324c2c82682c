// The sidebar's admin routes, on Node-RED's admin app (so under httpAdminRoot, behind adminAuth), each
// behind a permission of the package's own:
//   GET  /media-enhance/state                 the whole sidebar state (media-enhance.read)
//   GET  /media-enhance/results/:id           a result with its media's metadata and loudness report (media-enhance.read)
//   GET  /media-enhance/media/:uid/file?step= the media's ENHANCED (default) or PRE file, as an attachment;
//                                             only a media this instance handled, never a path (media-enhance.read)
//   POST /media-enhance/media/:uid/tickets    a ticket for the player, for one file {"step": "PRE"} of the
//                                             media (media-enhance.read; play-tickets.ts); a JSON body only
//   GET  /media-enhance/media/:uid/play?step=&ticket=
//                                             the same file for the editor's audio player, with Range
//                                             requests so it can seek (media-enhance.read, or a ticket
//                                             for exactly this file; play-cache.ts)
//   POST /media-enhance/results/clear         empties the results (media-enhance.write, as deploying needs);
//                                             a JSON body only
//   GET  /media-enhance/storage               the built-in engines' disk use and retention rule (media-enhance.read)
//   POST /media-enhance/storage/remove        removes their finished media now (media-enhance.write); a JSON body only
// Every route refuses a browser's cross-origin request (same-origin.ts). The editor's downloads have a
// small share of their own and never wait in the flows' line (download-share.ts).
// The service's key stays in the runtime: the editor only ever talks to these routes.
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { DownloadedStream } from '../client/download';
import { MediaEnhanceError } from '../client/errors';
import { attachmentDisposition } from '../contract/attachment';
import { DEFAULT_STEP, type Step } from '../contract/fields';
import { mediaFileOf, notFound, type MediaFile } from './media-file-request';
import type { AdminHandler, AdminResponse, PluginRed } from './plugin-api';
import { PlayCache } from './play-cache';
import { PlayTickets } from './play-tickets';
import { SidebarDownloadShare } from './download-share';
import type { SidebarRegistry } from './registry';
import { jsonBodyOnly, sameOriginOnly } from './same-origin';
import type { ResultDetailCache } from './result-details';
import { removeFinishedMedia, storageState } from './storage-state';

export const READ_PERMISSION = 'media-enhance.read';
export const WRITE_PERMISSION = 'media-enhance.write';

export function installAdminRoutes(
  RED: Pick<PluginRed, 'httpAdmin' | 'auth'>,
  registry: SidebarRegistry,
  details: ResultDetailCache,
  downloads = new SidebarDownloadShare(),
  plays = new PlayCache(),
  tickets = new PlayTickets(),
): void {
  // A media a built-in engine removed is no longer played from the copy kept for the player.
  registry.onMediaRemoved((uid) => {
    for (const step of ['PRE', 'ENHANCED'] as const) plays.forgetFile(playKey(uid, step));
  });
  const read = RED.auth.needsPermission(READ_PERMISSION);
  const write = RED.auth.needsPermission(WRITE_PERMISSION);
  /** The player's requests: the user's read permission, or a live ticket for exactly the file asked for. */
  const readOrTicket: AdminHandler = (req, res, next) => {
    const { ticket, step = DEFAULT_STEP } = req.query;
    if (ticket === undefined) return read(req, res, next);
    if (typeof ticket === 'string' && typeof step === 'string' && tickets.admits(ticket, req.params.uid, step as Step))
      return next();
    res.status(403).json({
      error: 'ticket: not a live ticket for this file (a ticket is good for one file of one media, for a few minutes)',
    });
  };

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

  /**
   * The media's file from its service for the editor: only a media this instance handled, through the
   * editor's small share of the downloads. Answers the request itself (404, 400, 429) and resolves with
   * undefined when there is nothing to send.
   */
  const download = async (
    { uid, step }: MediaFile,
    res: AdminResponse,
    signal: AbortSignal,
  ): Promise<{ file: DownloadedStream; release: () => void } | undefined> => {
    const client = registry.clientOf(registry.serviceOfMedia(uid));
    if (!client) return void notFound(res);
    const share = downloads.take(client.rateLimit('downloadFile'));
    if ('retryAfterS' in share) {
      return void busy(
        res,
        share.retryAfterS,
        'the editor has a small share of the downloads (at most ' +
          `${downloads.atOnce} at once and a tenth of the window), so that the flows' downloads go first; retry later`,
      );
    }
    try {
      // Never in the flows' line: a place now, or 429 at once.
      const file = await client.downloadFile(uid, { step, signal, waitForPlace: false });
      return { file, release: () => share.release() };
    } catch (err) {
      const noPlace = err instanceof MediaEnhanceError && err.code === 'RATE_LIMITED' && err.status === undefined;
      share.release(!noPlace);
      if (!noPlace) throw err;
      const until = client.rateLimit('downloadFile').rateLimitedUntil;
      const seconds = until === null ? 1 : Math.max(1, Math.ceil((until - Date.now()) / 1000));
      return void busy(res, seconds, "the service's download window is full or flows wait for a place; retry later");
    }
  };

  RED.httpAdmin.get(
    '/media-enhance/media/:uid/file',
    sameOriginOnly,
    read,
    answering(async (req, res) => {
      const cancel = new AbortController();
      res.on('close', () => cancel.abort());
      const asked = mediaFileOf(registry, res, req.params.uid, req.query.step);
      if (!asked) return;
      const got = await download(asked, res, cancel.signal);
      if (!got) return;
      res.on('close', got.release);
      const { file } = got;
      res.setHeader('Content-Type', file.contentType);
      res.setHeader('Content-Disposition', attachmentDisposition(file.fileName));
      if (file.size !== undefined) res.setHeader('Content-Length', String(file.size));
      await pipeline(file.stream, res);
    }),
  );

  RED.httpAdmin.post('/media-enhance/media/:uid/tickets', sameOriginOnly, read, jsonBodyOnly, (req, res) => {
    const asked = mediaFileOf(registry, res, req.params.uid, (req.body as { step?: unknown } | undefined)?.step);
    if (asked) res.json({ ticket: tickets.issue(asked.uid, asked.step) });
  });

  RED.httpAdmin.get(
    '/media-enhance/media/:uid/play',
    sameOriginOnly,
    readOrTicket,
    answering(async (req, res) => {
      // A kept file too is played only while its media is one this instance handled.
      const asked = mediaFileOf(registry, res, req.params.uid, req.query.step);
      if (!asked) return;
      const key = playKey(asked.uid, asked.step);
      let answered = false;
      const played = await plays
        .file(key, async (path) => {
          // Not aborted when this request closes: the media element drops requests as it seeks, and
          // the next one finds the file on its way.
          const got = await download(asked, res, new AbortController().signal);
          if (!got) {
            answered = true;
            throw new MediaEnhanceError('NOT_FOUND', 'the file could not be fetched for the player');
          }
          try {
            await pipeline(got.file.stream, createWriteStream(path, { mode: 0o600 }));
          } finally {
            got.release();
          }
          return { contentType: got.file.contentType };
        })
        .catch((err: unknown) => {
          if (answered) return undefined;
          throw err;
        });
      if (!played) return;
      // The file is the service's to describe but this origin's to serve: only a media type is sent as
      // itself, never sniffed, kept nowhere, and sandboxed should it be opened as a page.
      res.setHeader('Content-Type', playableType(played.contentType));
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Cache-Control', 'no-store, private');
      res.setHeader('Referrer-Policy', 'no-referrer');
      res.setHeader('Content-Security-Policy', 'sandbox');
      await new Promise<void>((resolve, reject) =>
        // express's sendFile answers Range requests (206, Content-Range) and conditional ones.
        res.sendFile(played.path, { cacheControl: false, lastModified: false }, (err) =>
          err && !res.headersSent ? reject(err) : resolve(),
        ),
      );
    }),
  );

  RED.httpAdmin.post('/media-enhance/results/clear', sameOriginOnly, write, jsonBodyOnly, (_req, res) => {
    registry.clearResults();
    details.clear();
    plays.clear();
    tickets.clear();
    res.status(204).end();
  });

  RED.httpAdmin.get(
    '/media-enhance/storage',
    sameOriginOnly,
    read,
    answering(async (_req, res) => {
      res.json(await storageState(registry));
    }),
  );

  RED.httpAdmin.post(
    '/media-enhance/storage/remove',
    sameOriginOnly,
    write,
    jsonBodyOnly,
    answering(async (_req, res) => {
      const removed = await removeFinishedMedia(registry);
      plays.clear();
      res.json(removed);
    }),
  );
}

/** The play cache's key of a media's file. */
function playKey(uid: string, step: Step): string {
  return `${uid} ${step}`;
}

/** The service's content type when it is audio or video, else one no browser renders. */
export function playableType(contentType: string): string {
  return /^(audio|video)\/[\w.+-]+(\s*;.*)?$/i.test(contentType.trim())
    ? contentType.trim()
    : 'application/octet-stream';
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
