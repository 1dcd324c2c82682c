// The sidebar's admin routes in a real Node-RED with adminAuth on: the package packed and installed as a
// user installs it, two users in settings.js (bcrypt passwords), tokens from /auth/token as the editor
// gets them. Without a token nothing is answered; a reader can look but not clear; a file is served only
// for a media this instance handled, never for a path.
import assert from 'node:assert/strict';
import { type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { request, WebSocket } from 'undici';
import { ROOT as REPO, packPackage, spawnNodeRed, unpackPackage, waitForNodeRed } from '../fixtures/node-red-process';
import { freePort } from '../fixtures/free-port';
import { readUntil } from '../fixtures/read-until';
import { makeWav } from '../fixtures/media';
import type { ResultRow, SidebarState, StorageState } from '../../src/sidebar/state';
import { playableType } from '../../src/sidebar/admin-routes';

// Node-RED's own dependency, which it uses to check these passwords.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- bcryptjs ships no types this project installs
const bcrypt = require('bcryptjs') as { hashSync(text: string, rounds: number): string };

const ADMIN = { username: 'admin', password: 'admin-pass-7f3c' };
const READER = { username: 'reader', password: 'reader-pass-2b9d' };
/** May see the nodes' status and nothing of this package. */
const WATCHER = { username: 'watcher', password: 'watcher-pass-5e1a' };

describe('the sidebar admin routes in a real Node-RED with adminAuth', function () {
  this.timeout(120_000);
  let userDir: string;
  let base: string;
  let nodeRed: ChildProcess;
  let output = '';
  let adminToken: string;
  let readerToken: string;
  let watcherToken: string;

  before(async () => {
    await fsp.mkdir(join(REPO, 'test-artifacts'), { recursive: true });
    userDir = await fsp.mkdtemp(join(REPO, 'test-artifacts', 'node-red-auth-'));
    unpackPackage(packPackage(userDir), userDir);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const users = [
      { username: ADMIN.username, password: bcrypt.hashSync(ADMIN.password, 8), permissions: '*' },
      { username: READER.username, password: bcrypt.hashSync(READER.password, 8), permissions: 'read' },
      { username: WATCHER.username, password: bcrypt.hashSync(WATCHER.password, 8), permissions: ['status.read'] },
    ];
    await fsp.writeFile(
      join(userDir, 'settings.js'),
      `module.exports = { uiHost: '127.0.0.1', uiPort: ${port}, credentialSecret: 'test-secret', flowFile: 'flows.json',` +
        ` adminAuth: { type: 'credentials', users: ${JSON.stringify(users)} } };\n`,
    );
    nodeRed = spawnNodeRed(userDir, join(userDir, 'settings.js'));
    nodeRed.stdout!.on('data', (chunk) => (output += chunk));
    nodeRed.stderr!.on('data', (chunk) => (output += chunk));
    await waitForNodeRed(nodeRed, base, () => output, 60_000, '/auth/login');
    adminToken = await token(ADMIN, '*');
    // The editor asks for the user's own permissions (an empty scope): a reader cannot ask for '*'.
    readerToken = await token(READER, '');
    watcherToken = await token(WATCHER, '');
  });

  after(async () => {
    if (nodeRed && nodeRed.exitCode === null) {
      nodeRed.kill('SIGINT');
      await once(nodeRed, 'exit');
    }
    if (userDir) await fsp.rm(userDir, { recursive: true, force: true });
  });

  async function token(user: { username: string; password: string }, scope: string): Promise<string> {
    const res = await request(`${base}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'node-red-admin', grant_type: 'password', scope, ...user }).toString(),
    });
    const text = await res.body.text();
    assert.equal(res.statusCode, 200, text);
    return (JSON.parse(text) as { access_token: string }).access_token;
  }

  async function call(
    method: 'GET' | 'POST',
    path: string,
    bearer?: string,
    body?: unknown,
  ): Promise<{ status: number; body: Buffer; type: string; disposition: string }> {
    const headers: Record<string, string> = bearer ? { authorization: `Bearer ${bearer}` } : {};
    if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json' });
    const res = await request(`${base}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'node-red-deployment-type': 'full' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: res.statusCode,
      body: Buffer.from(await res.body.arrayBuffer()),
      type: String(res.headers['content-type']),
      disposition: String(res.headers['content-disposition']),
    };
  }

  const state = async (bearer: string) =>
    JSON.parse((await call('GET', '/media-enhance/state', bearer)).body.toString()) as SidebarState;

  it('answers 401 and no data without a token, the state with one', async () => {
    const anonymous = await call('GET', '/media-enhance/state');
    assert.equal(anonymous.status, 401);
    assert.ok(!anonymous.body.toString().includes('services'), 'no state in the answer');
    const bad = await call('GET', '/media-enhance/state', 'not-a-token');
    assert.equal(bad.status, 401);
    const withToken = await call('GET', '/media-enhance/state', adminToken);
    assert.equal(withToken.status, 200);
    assert.deepEqual(Object.keys(JSON.parse(withToken.body.toString()) as object).sort(), [
      'inFlight',
      'inFlightMore',
      'results',
      'sentAt',
      'services',
      'streams',
    ]);
  });

  it('lists a finished media, serves its enhanced file and its details, and lets only a writer clear the results', async () => {
    const input = join(userDir, 'take-1.wav');
    await fsp.writeFile(input, makeWav(1, 16_000));
    const flows = [
      { id: 'tab', type: 'tab', label: 'sidebar' },
      { id: 'svc', type: 'media-enhance-config', name: 'studio engine', mode: 'local' },
      {
        id: 'go',
        type: 'inject',
        z: 'tab',
        props: [{ p: 'filename', v: input, vt: 'str' }],
        repeat: '',
        once: false,
        wires: [['upload']],
      },
      { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['wait']] },
      { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', name: 'until done', wires: [['download']] },
      {
        id: 'download',
        type: 'media-enhance-download',
        z: 'tab',
        service: 'svc',
        step: 'ENHANCED',
        output: 'file',
        folder: 'outbox',
        fileName: '',
        wires: [[]],
      },
    ];
    const deployed = await call('POST', '/flows', adminToken, flows);
    assert.equal(deployed.status, 204, deployed.body.toString());
    // The service shows as soon as its engine listens: by its config node's id and name, on loopback.
    const shown = await readUntil(
      () => state(adminToken),
      (read) => Boolean(read.services[0]?.url),
      'the deployed service with its engine URL',
    );
    assert.equal(shown.services.length, 1);
    assert.equal(shown.services[0].id, 'svc');
    assert.equal(shown.services[0].name, 'studio engine');
    assert.equal(shown.services[0].kind, 'built-in');
    assert.match(shown.services[0].url ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);

    assert.equal((await call('POST', '/inject/go', adminToken)).status, 200);
    let result: ResultRow | undefined;
    for (const deadline = Date.now() + 30_000; !result && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 200));
      result = (await state(readerToken)).results.find((row) => row.nodeId === 'download');
    }
    assert.ok(result, `a result of the download node (log:\n${output.slice(-2000)})`);
    assert.equal(result.outcome, 'done');
    assert.equal(result.nodeName, 'download');
    const uid = result.uid!;
    assert.ok(uid, 'the result names its media');
    const waited = (await state(readerToken)).results.filter((row) => row.uid === uid);
    assert.equal(waited.length, 1, 'one row per media: the download replaced the wait');

    // The enhanced file, as the engine served it to the download node.
    const written = (await fsp.readdir(join(userDir, 'outbox'))).filter((f) => f.endsWith('.wav'));
    const delivered = await fsp.readFile(join(userDir, 'outbox', written[0]));
    const file = await call('GET', `/media-enhance/media/${encodeURIComponent(uid)}/file`, readerToken);
    assert.equal(file.status, 200, file.body.toString());
    assert.match(file.disposition, /^attachment; filename="/);
    assert.match(file.type, /audio/);
    assert.ok(file.body.equals(delivered), 'the same bytes as the engine served');
    const original = await call('GET', `/media-enhance/media/${encodeURIComponent(uid)}/file?step=PRE`, readerToken);
    assert.equal(original.status, 200);
    assert.ok(original.body.equals(await fsp.readFile(input)), 'the original is the file as uploaded');
    assert.equal(
      (await call('GET', `/media-enhance/media/${encodeURIComponent(uid)}/file`)).status,
      401,
      'no file without a token',
    );

    const details = await call('GET', `/media-enhance/results/${result.id}`, readerToken);
    assert.equal(details.status, 200, details.body.toString());
    const detail = JSON.parse(details.body.toString()) as {
      result: ResultRow;
      metadata: { uid: string; enhancement_status: string } | null;
      loudness: { uid: string; input: { short_term_lufs: unknown[] }; output: { short_term_lufs: unknown[] } } | null;
      loudnessOffered: boolean;
    };
    assert.equal(detail.result.id, result.id);
    assert.equal(detail.metadata?.uid, uid);
    assert.equal(detail.metadata?.enhancement_status, 'COMPLETED');
    // The built-in engine offers the loudness report: the chart's data, through the runtime's client.
    assert.equal(detail.loudnessOffered, true);
    assert.equal(detail.loudness?.uid, uid);
    assert.ok((detail.loudness?.output.short_term_lufs.length ?? 0) > 0, 'one value per second');
    assert.equal((await call('GET', '/media-enhance/results/no-such-result', readerToken)).status, 404);

    // The editor's player: a media element sends no header, so its address carries a ticket for that one
    // file, which the editor asks for with the user's token; never the token itself. Range requests are
    // answered so that it can seek.
    const ticketPath = `/media-enhance/media/${encodeURIComponent(uid)}/tickets`;
    assert.equal(
      (await call('POST', ticketPath, undefined, { step: 'ENHANCED' })).status,
      401,
      'no ticket without a token',
    );
    assert.equal((await call('POST', ticketPath, watcherToken, { step: 'ENHANCED' })).status, 401, 'nor without read');
    const issued = await call('POST', ticketPath, readerToken, { step: 'ENHANCED' });
    assert.equal(issued.status, 200, issued.body.toString());
    const { ticket } = JSON.parse(issued.body.toString()) as { ticket: string };
    for (const secret of [readerToken, adminToken]) assert.ok(!ticket.includes(secret) && !secret.includes(ticket));
    const playPath = `/media-enhance/media/${encodeURIComponent(uid)}/play?step=ENHANCED`;
    const played = await request(`${base}${playPath}&ticket=${encodeURIComponent(ticket)}`, {
      headers: { range: 'bytes=0-11' },
    });
    const playedBody = Buffer.from(await played.body.arrayBuffer());
    assert.equal(played.statusCode, 206);
    assert.match(String(played.headers['content-type']), /^audio\//);
    assert.equal(played.headers['x-content-type-options'], 'nosniff');
    assert.equal(played.headers['cache-control'], 'no-store, private');
    assert.equal(played.headers['referrer-policy'], 'no-referrer');
    assert.equal(played.headers['content-security-policy'], 'sandbox');
    assert.equal(played.headers['content-range'], `bytes 0-11/${delivered.length}`);
    assert.ok(playedBody.equals(delivered.subarray(0, 12)), 'the first 12 bytes of the enhanced file');
    const wholePlay = await call('GET', playPath, readerToken);
    assert.equal(wholePlay.status, 200);
    assert.ok(wholePlay.body.equals(delivered), 'the whole file, as the download node wrote it');
    assert.equal((await call('GET', playPath)).status, 401, 'no playing without a token or a ticket');
    const otherFile = `/media-enhance/media/${encodeURIComponent(uid)}/play?step=PRE&ticket=${encodeURIComponent(ticket)}`;
    assert.equal((await call('GET', otherFile)).status, 403, "the ticket does not open the media's other file");
    assert.equal((await call('GET', `${playPath}&ticket=made-up`)).status, 403, 'nor does a made-up ticket');

    // The storage block: a reader sees the disk use; only a writer removes the finished media.
    const storage = async () =>
      JSON.parse((await call('GET', '/media-enhance/storage', readerToken)).body.toString()) as StorageState;
    const before = await storage();
    assert.deepEqual(
      before.services.map((entry) => [entry.serviceId, entry.name, entry.use?.media, entry.use?.finished]),
      [['svc', 'studio engine', 1, 1]],
    );
    assert.ok((before.services[0].use?.bytes ?? 0) > delivered.length, 'its input and output at least');
    const notRemoved = await call('POST', '/media-enhance/storage/remove', readerToken, {});
    assert.ok([401, 403].includes(notRemoved.status), `a reader cannot remove (${notRemoved.status})`);
    assert.equal((await call('POST', '/media-enhance/storage/remove', adminToken)).status, 415, 'a JSON body only');
    assert.equal((await storage()).services[0].use?.finished, 1, 'nothing removed');
    const removal = await call('POST', '/media-enhance/storage/remove', adminToken, {});
    assert.equal(removal.status, 200, removal.body.toString());
    assert.deepEqual(JSON.parse(removal.body.toString()), { removed: 1, bytes: before.services[0].use?.bytes });
    assert.deepEqual((await storage()).services[0].use, { media: 0, finished: 0, bytes: 0, oldest: null });

    const refused = await call('POST', '/media-enhance/results/clear', readerToken);
    assert.ok([401, 403].includes(refused.status), `a reader cannot clear (${refused.status})`);
    assert.equal((await call('POST', '/media-enhance/results/clear')).status, 401);
    assert.equal((await state(readerToken)).results.length > 0, true, 'nothing cleared');
    const notJson = await call('POST', '/media-enhance/results/clear', adminToken);
    assert.equal(notJson.status, 415, 'a state-changing request without a JSON body (as a form can send) is refused');
    assert.equal((await state(readerToken)).results.length > 0, true, 'nothing cleared');
    assert.equal((await call('POST', '/media-enhance/results/clear', adminToken, {})).status, 204);
    assert.deepEqual((await state(readerToken)).results, []);
    // Once its result is gone, the media is no longer one the editor may download.
    assert.equal((await call('GET', `/media-enhance/media/${encodeURIComponent(uid)}/file`, adminToken)).status, 404);
  });

  it('gives a user who may only read the status neither the state from the route nor over comms', async () => {
    assert.equal((await call('GET', '/media-enhance/state', watcherToken)).status, 401);
    // The editor's comms, as this user's editor opens them: the retained message comes at subscribe, and
    // a deploy (a service added) makes another.
    const messages: { topic: string; data: unknown }[] = [];
    const socket = new WebSocket(`${base.replace('http', 'ws')}/comms`);
    socket.addEventListener('message', (event) => {
      const parsed = JSON.parse(String(event.data)) as { topic?: string; data?: unknown }[] | { auth?: string };
      if (!Array.isArray(parsed)) {
        if (parsed.auth === 'ok') socket.send(JSON.stringify({ subscribe: 'media-enhance/state' }));
        return;
      }
      messages.push(
        ...parsed.filter((m) => m.topic === 'media-enhance/state').map((m) => m as { topic: string; data: unknown }),
      );
    });
    await new Promise((resolve) => socket.addEventListener('open', resolve));
    socket.send(JSON.stringify({ auth: watcherToken }));
    try {
      const flows = [{ id: 'watched', type: 'media-enhance-config', name: 'watched engine', mode: 'local' }];
      assert.equal((await call('POST', '/flows', adminToken, flows)).status, 204);
      for (const deadline = Date.now() + 20_000; messages.length < 2 && Date.now() < deadline;)
        await new Promise((r) => setTimeout(r, 100));
      assert.ok(messages.length >= 2, `the retained signal and one after the deploy (got ${messages.length})`);
      for (const message of messages) {
        assert.deepEqual(Object.keys(message.data as object), ['version'], 'a signal, no content');
        assert.ok(!JSON.stringify(message.data).includes('watched engine'), 'no service name');
      }
      // The editor of a user who may read it fetches the state the signals announced, and its next ones
      // (a signal may come before the deploy's service is in the state: the editor reads again at the next).
      await readUntil(
        () => state(readerToken),
        (shown) => shown.services.some((service) => service.name === 'watched engine'),
        'the deployed service in the state a reader fetches',
      );
    } finally {
      socket.close();
    }
  });

  it('refuses a request from another origin, even with a token', async () => {
    const evil = await request(`${base}/media-enhance/state`, {
      headers: { authorization: `Bearer ${adminToken}`, origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(evil.statusCode, 403);
    assert.ok(!(await evil.body.text()).includes('services'), 'no state in the answer');
  });

  it('refuses a media uid this instance never handled, and a path given as a uid', async () => {
    const unknown = await call('GET', '/media-enhance/media/3f1c9a2e-0000-4000-8000-000000000000/file', adminToken);
    assert.equal(unknown.status, 404);
    for (const path of [
      '/media-enhance/media/..%2F..%2Fetc%2Fpasswd/file',
      '/media-enhance/media/%2Fetc%2Fpasswd/file',
      '/media-enhance/media//etc/passwd/file',
      '/media-enhance/media/..%2F..%2F..%2F..%2Fsettings.js/file',
      '/media-enhance/media/..%2F..%2Fetc%2Fpasswd/play',
      '/media-enhance/media/..%2F..%2F..%2F..%2Fsettings.js/play?step=PRE',
    ]) {
      const answer = await call('GET', path, adminToken);
      assert.equal(answer.status, 404, path);
      assert.ok(!answer.body.toString().includes('root:'), `${path}: no file content`);
      assert.ok(!answer.body.toString().includes('adminAuth'), `${path}: no settings`);
    }
  });
});

describe('the sidebar admin routes in a real Node-RED without adminAuth', function () {
  this.timeout(120_000);
  let userDir: string;
  let base: string;
  let nodeRed: ChildProcess;
  let output = '';

  before(async () => {
    await fsp.mkdir(join(REPO, 'test-artifacts'), { recursive: true });
    userDir = await fsp.mkdtemp(join(REPO, 'test-artifacts', 'node-red-open-'));
    unpackPackage(packPackage(userDir), userDir);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    await fsp.writeFile(
      join(userDir, 'settings.js'),
      `module.exports = { uiHost: '127.0.0.1', uiPort: ${port}, credentialSecret: 'test-secret', flowFile: 'flows.json' };\n`,
    );
    nodeRed = spawnNodeRed(userDir, join(userDir, 'settings.js'));
    nodeRed.stdout!.on('data', (chunk) => (output += chunk));
    nodeRed.stderr!.on('data', (chunk) => (output += chunk));
    await waitForNodeRed(nodeRed, base, () => output, 60_000);
  });

  after(async () => {
    if (nodeRed && nodeRed.exitCode === null) {
      nodeRed.kill('SIGINT');
      await once(nodeRed, 'exit');
    }
    if (userDir) await fsp.rm(userDir, { recursive: true, force: true });
  });

  async function call(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string) {
    const res = await request(`${base}${path}`, { method, headers, body });
    return { status: res.statusCode, text: await res.body.text() };
  }

  it("answers the editor's own pages, and refuses another site's page whatever it asks", async () => {
    const editor = { origin: base, 'sec-fetch-site': 'same-origin' };
    assert.equal((await call('GET', '/media-enhance/state', editor)).status, 200);
    assert.equal(
      (await call('GET', '/media-enhance/state', {})).status,
      200,
      'not a browser: adminAuth is what guards',
    );
    const pages: Record<string, string>[] = [
      { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
      { origin: 'http://evil.example' }, // a browser that sends no Sec-Fetch-Site
      // ...naming its own host as the one a proxy was asked for: no proxy is trusted here
      { origin: 'http://evil.example', 'x-forwarded-host': 'evil.example' },
      { 'sec-fetch-site': 'same-site' }, // another port or subdomain of the same site
      { origin: 'null' }, // a sandboxed frame or a file
    ];
    for (const page of pages) {
      const read = await call('GET', '/media-enhance/state', page);
      assert.equal(read.status, 403, JSON.stringify(page));
      assert.ok(!read.text.includes('services'), `${JSON.stringify(page)}: no state`);
      assert.equal(
        (await call('GET', '/media-enhance/media/3f1c9a2e-0000-4000-8000-000000000000/file', page)).status,
        403,
      );
      const clear = await call(
        'POST',
        '/media-enhance/results/clear',
        { ...page, 'content-type': 'application/json' },
        '{}',
      );
      assert.equal(clear.status, 403, `${JSON.stringify(page)}: clear`);
    }
    // What an HTML form of any page can send: refused even where the origin is not told.
    const form = await call(
      'POST',
      '/media-enhance/results/clear',
      { 'content-type': 'application/x-www-form-urlencoded' },
      'a=1',
    );
    assert.equal(form.status, 415);
    assert.match(form.text, /Content-Type must be application\/json/);
    assert.equal(
      (await call('POST', '/media-enhance/results/clear', { ...editor, 'content-type': 'application/json' }, '{}'))
        .status,
      204,
    );
  });
});

describe("the player's route sends a service's file as audio or video only", () => {
  it('keeps an audio or video type and sends anything else as application/octet-stream', () => {
    assert.equal(playableType('audio/wav'), 'audio/wav');
    assert.equal(playableType('video/mp4; codecs="avc1"'), 'video/mp4; codecs="avc1"');
    for (const type of ['text/html', 'image/svg+xml', 'application/xhtml+xml', 'audio', '', 'audio/wav\ntext/html']) {
      assert.equal(playableType(type), 'application/octet-stream', type);
    }
  });
});
