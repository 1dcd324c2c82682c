// The sidebar's admin routes on a real express app, as Node-RED's admin app without adminAuth (every
// permission passes), with finished media of a client on record as a download node's results, so that
// the routes serve them.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MediaEnhanceClient } from '../../src/client/client';
import { installAdminRoutes } from '../../src/sidebar/admin-routes';
import type { AdminApp, AdminHandler } from '../../src/sidebar/plugin-api';
import type { PlayTickets } from '../../src/sidebar/play-tickets';
import { SidebarRegistry } from '../../src/sidebar/registry';
import { ResultDetailCache } from '../../src/sidebar/result-details';

// Node-RED's own web framework, as its admin app uses it.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- express ships no types this project installs
const express = require('express') as (() => AdminApp & {
  listen(port: number, host: string): Server;
  use(handler: AdminHandler): void;
}) & { json(): AdminHandler };

export interface ServedAdminRoutes {
  registry: SidebarRegistry;
  /** The routes' origin, `http://127.0.0.1:<port>`. */
  base: string;
  close(): Promise<void>;
}

export async function serveAdminRoutes(
  client: MediaEnhanceClient,
  serviceUrl: string,
  uids: string | string[],
  tickets?: PlayTickets,
): Promise<ServedAdminRoutes> {
  const registry = new SidebarRegistry();
  registry.addService('svc', { name: 'studio', kind: 'remote' }).ready(client, serviceUrl);
  for (const uid of [uids].flat()) {
    const job = registry.beginJob(
      { nodeId: 'dl', nodeName: 'download', nodeType: 'media-enhance-download', serviceId: 'svc' },
      'downloading',
    );
    job.media(uid);
    job.done(undefined, true);
  }
  const app = express();
  app.use(express.json()); // as Node-RED's admin app parses JSON bodies
  const pass: AdminHandler = (_req, _res, next) => next();
  installAdminRoutes(
    { httpAdmin: app, auth: { needsPermission: () => pass } },
    registry,
    new ResultDetailCache(registry),
    undefined,
    undefined,
    tickets,
  );
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    registry,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
