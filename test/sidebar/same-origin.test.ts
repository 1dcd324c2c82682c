// The sidebar routes' same-origin check on Node-RED's own web framework: the host a request names in
// X-Forwarded-Host counts only when the user told the admin app to trust a proxy (Node-RED's
// `httpServerOptions: { 'trust proxy': ... }`), and then only from an address it trusts.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { sameOriginOnly } from '../../src/sidebar/same-origin';
import type { AdminHandler } from '../../src/sidebar/plugin-api';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- express ships no types this project installs
const express = require('express') as () => {
  get(path: string, ...handlers: AdminHandler[]): void;
  set(name: string, value: unknown): void;
  listen(port: number, host: string): Server;
};

async function serve(trustProxy?: unknown): Promise<{ base: string; close(): Promise<void> }> {
  const app = express();
  if (trustProxy !== undefined) app.set('trust proxy', trustProxy);
  app.get('/state', sameOriginOnly, (_req, res) => void res.status(200).json({ services: [] }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function status(base: string, headers: Record<string, string>): Promise<number> {
  const res = await request(`${base}/state`, { headers });
  await res.body.dump();
  return res.statusCode;
}

describe("the sidebar's same-origin check behind a proxy", () => {
  it('ignores X-Forwarded-Host when no proxy is trusted (the default)', async () => {
    const served = await serve();
    try {
      const forged = { origin: 'http://evil.example', 'x-forwarded-host': 'evil.example' };
      assert.equal(await status(served.base, forged), 403);
      assert.equal(await status(served.base, { origin: served.base }), 200, "the editor's own page");
    } finally {
      await served.close();
    }
  });

  it('honours X-Forwarded-Host from a trusted proxy only', async () => {
    const viaProxy = { origin: 'https://red.example.org', 'x-forwarded-host': 'red.example.org' };
    const trusted = await serve('loopback');
    try {
      assert.equal(await status(trusted.base, viaProxy), 200);
      assert.equal(
        await status(trusted.base, { ...viaProxy, 'x-forwarded-host': 'red.example.org, evil.example' }),
        200,
      );
      assert.equal(await status(trusted.base, { ...viaProxy, 'x-forwarded-host': 'other.example' }), 403);
    } finally {
      await trusted.close();
    }
    // A proxy trusted at another address: the request from loopback is not from it.
    const elsewhere = await serve('127.0.0.2');
    try {
      assert.equal(await status(elsewhere.base, viaProxy), 403);
    } finally {
      await elsewhere.close();
    }
  });
});
