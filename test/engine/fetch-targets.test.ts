// Where an engine exposed beyond loopback may fetch enhance-json's file from. The tests never listen
// beyond loopback: `allowPrivateFetch: false` gives an engine on 127.0.0.1 the policy of an exposed one,
// and 127.0.0.2 (loopback too) stands for an allowed host through `allowFetchFrom`.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolveEngineOptions } from '../../src/engine/options';
import { makeWav } from '../fixtures/media';
import { AUDIO_BODY, call, KEY, settled, startTestEngine, type TestEngine } from './helpers';

const GENERIC = 'file_download_url: the input URL could not be fetched';
const wav = makeWav(0.3, 8_000);

/** A loopback server that counts what it is asked and answers each path as `routes` says. */
async function counting(
  host: string,
  routes: Record<string, { status: number; headers?: Record<string, string>; body?: Buffer }>,
) {
  const asked: string[] = [];
  const server: Server = createServer((req, res) => {
    asked.push(req.url ?? '');
    const route = routes[req.url ?? ''] ?? { status: 404 };
    res.writeHead(route.status, route.headers);
    res.end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, asked, close: () => (server.closeAllConnections(), server.close()) };
}

describe('engine: where enhance-json may fetch from', function () {
  let engine: TestEngine | undefined;
  const servers: { close(): void }[] = [];
  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
    for (const s of servers.splice(0)) s.close();
  });

  async function fetched(url: string): Promise<{ status: string; message?: string; uid: string }> {
    const res = await call(`${engine!.url}/v1/media/enhance-json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ ...AUDIO_BODY, file_download_url: url }),
    });
    assert.equal(res.status, 201, res.text);
    const done = await settled(engine!, res.json.generated_name);
    return { status: done.enhancement_status, message: done.error?.message, uid: done.uid };
  }

  it('an exposed engine refuses loopback and unspecified addresses, by literal and by name, before connecting', async () => {
    // An "admin" file only this machine should reach, starting with RIFF bytes as a media would.
    const admin = await counting('127.0.0.1', { '/admin/secret.wav': { status: 200, body: wav } });
    servers.push(admin);
    engine = await startTestEngine({ allowPrivateFetch: false });
    for (const host of ['127.0.0.1', '0.0.0.0', 'localhost', '[::1]', '[::ffff:127.0.0.1]', '127.1', '2130706433']) {
      const outcome = await fetched(`http://${host}:${admin.port}/admin/secret.wav`);
      assert.equal(outcome.status, 'FAILED', host);
      assert.equal(outcome.message, GENERIC, `${host}: the reason tells nothing of the target`);
      const pre = await call(`${engine.url}/v2/medias/${outcome.uid}/file?step=PRE`, { headers: { 'x-api-key': KEY } });
      assert.equal(pre.status, 412, `${host}: no file to serve back`);
    }
    assert.deepEqual(admin.asked, [], 'the loopback server was never asked');
    assert.ok(
      engine.errorLines.some((l) => /localhost: .*loopback address/.test(l)),
      'the engine log says why, after resolving the name',
    );
    assert.ok(
      engine.errorLines.every((l) => !l.includes('/admin/secret.wav')),
      'the log names origins, not paths',
    );
  });

  it('checks every redirect hop: an allowed host redirecting to localhost is refused, its own file served', async () => {
    const admin = await counting('127.0.0.1', { '/admin/secret.wav': { status: 200, body: wav } });
    const files = await counting('127.0.0.2', {
      '/speech.wav': { status: 200, body: wav },
      '/to-admin': { status: 302, headers: { location: `http://localhost:${admin.port}/admin/secret.wav` } },
      '/to-literal': { status: 307, headers: { location: `http://127.0.0.1:${admin.port}/admin/secret.wav` } },
    });
    servers.push(admin, files);
    engine = await startTestEngine({ allowPrivateFetch: false, allowFetchFrom: ['127.0.0.2/32'] });
    assert.equal(
      (await fetched(`http://127.0.0.2:${files.port}/speech.wav`)).status,
      'COMPLETED',
      'an allowed host is fetched',
    );
    for (const path of ['/to-admin', '/to-literal']) {
      const outcome = await fetched(`http://127.0.0.2:${files.port}${path}`);
      assert.equal(outcome.status, 'FAILED', path);
      assert.equal(outcome.message, GENERIC);
    }
    assert.deepEqual(files.asked, ['/speech.wav', '/to-admin', '/to-literal']);
    assert.deepEqual(admin.asked, [], 'no redirect reached the loopback server');
  });

  it('tells a closed port and a refused host apart by nothing: one reason for both, the cause in the log only', async () => {
    const closed = await counting('127.0.0.1', {});
    closed.close(); // its port is now closed
    const open = await counting('127.0.0.1', {});
    servers.push(open);
    engine = await startTestEngine({ allowPrivateFetch: false });
    const refused = await fetched(`http://127.0.0.1:${open.port}/x.wav`);
    await engine.dispose();
    // A loopback engine may fetch from loopback, but a closed port still reads as the same reason.
    engine = await startTestEngine();
    const unreachable = await fetched(`http://127.0.0.1:${closed.port}/x.wav`);
    assert.equal(refused.message, GENERIC);
    assert.equal(unreachable.message, GENERIC);
    assert.ok(
      engine.errorLines.some((l) => /ECONNREFUSED/.test(l)),
      'the engine log keeps the cause',
    );
  });

  it('an engine on loopback keeps fetching from loopback (the built-in engine serves its own examples)', async () => {
    const files = await counting('127.0.0.1', { '/speech.wav': { status: 200, body: wav } });
    servers.push(files);
    engine = await startTestEngine();
    assert.equal((await fetched(`http://127.0.0.1:${files.port}/speech.wav`)).status, 'COMPLETED');
    assert.equal((await fetched(`http://localhost:${files.port}/speech.wav`)).status, 'COMPLETED');
  });

  it('the policy follows the address the engine listens on, unless told otherwise', () => {
    const base = { apiKeys: ['k'], dataDir: '/unused' };
    for (const host of ['127.0.0.1', '::1', 'localhost', '127.0.0.5'])
      assert.equal(resolveEngineOptions({ ...base, host }).allowPrivateFetch, true, host);
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'media.example'])
      assert.equal(resolveEngineOptions({ ...base, host }).allowPrivateFetch, false, host);
    assert.equal(resolveEngineOptions({ ...base, host: '0.0.0.0', allowPrivateFetch: true }).allowPrivateFetch, true);
    assert.throws(
      () => resolveEngineOptions({ ...base, allowFetchFrom: ['10.0.0.0/33'] }),
      /allowFetchFrom: each entry must be an IP address or a CIDR range .*"10\.0\.0\.0\/33"/,
    );
  });
});
