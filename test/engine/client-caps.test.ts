// What one client may hold of the server: connections per client address (slow connections of one
// address cannot take every place), and `?wait=` requests held at once per key.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { makeWav } from '../fixtures/media';
import { KEY, metadata, startTestEngine, upload, type TestEngine } from './helpers';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A connection from `localAddress` (any of 127.0.0.0/8 is this machine) that sends one byte and then nothing. */
function slowConnection(
  engine: TestEngine,
  localAddress: string,
): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect({ port: Number(new URL(engine.url).port), host: '127.0.0.1', localAddress });
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      socket.write('G');
      resolve({ socket, received: () => text, closed });
    });
    socket.once('error', reject);
  });
}

describe('engine: what one client may hold', function () {
  this.timeout(30_000);
  let engine: TestEngine | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await engine?.dispose();
    engine = undefined;
  });

  it('caps connections per client address: one slow client cannot hold every place', async () => {
    engine = await startTestEngine({ server: { maxConnections: 20, maxConnectionsPerClient: 5 } });
    const slow = [];
    for (let i = 0; i < 40; i++) {
      const connection = await slowConnection(engine, '127.0.0.2');
      sockets.push(connection.socket);
      slow.push(connection);
    }
    // Those beyond the client's five are answered 503 with Retry-After and closed, not held.
    await Promise.all(slow.slice(5).map((c) => c.closed));
    for (const c of slow.slice(5)) {
      assert.match(c.received(), /^HTTP\/1\.1 503 /, c.received());
      assert.match(c.received(), /retry-after: \d+/i);
      assert.match(c.received(), /more than the 5 connections one client may hold/);
    }
    for (const c of slow.slice(0, 5))
      assert.equal(c.socket.destroyed, false, 'within the cap: left to the head timeout');
    // Another client is served.
    assert.equal((await metadata(engine, '3f1c9a2e-0000-4000-8000-000000000000')).status, 404);
  });

  it("holds at most the key's number of `?wait=` requests at once; beyond, answers at once as it stands", async () => {
    engine = await startTestEngine({
      metadataWaitS: 20,
      processingDelayMs: 30_000,
      server: { maxHeldWaitsPerKey: 2 },
    });
    const uid = String((await upload(engine, makeWav(0.2, 16_000), 'a.wav')).json.uid);
    // PROCESSING for 30 s once its metadata on disk says so (the change wakes held requests once written).
    const meta = join(engine.dataDir, 'media', uid, 'meta.json');
    while (!(await fsp.readFile(meta, 'utf8').catch(() => '')).includes('"PROCESSING"')) await sleep(50);
    await sleep(200);
    const held = [0, 1].map(() =>
      request(`${engine!.url}/v2/medias/${uid}/metadata?wait=20`, { headers: { 'x-api-key': KEY } }),
    );
    let heldAnswered = false;
    void Promise.race(held).then(() => (heldAnswered = true));
    await sleep(1000); // both are held by now
    const third = await request(`${engine.url}/v2/medias/${uid}/metadata?wait=20`, { headers: { 'x-api-key': KEY } });
    assert.equal(third.statusCode, 200);
    assert.equal(((await third.body.json()) as { enhancement_status: string }).enhancement_status, 'PROCESSING');
    assert.equal(third.headers['x-metadata-wait'], '0', 'it tells the client to poll plainly once');
    assert.equal(heldAnswered, false, 'the first two are still held');
    const other = await request(`${engine.url}/v2/medias/${uid}/metadata?wait=1`, {
      headers: { 'x-api-key': 'engine-test-key-2' },
    });
    await other.body.dump();
    assert.equal(other.statusCode, 200);
    assert.equal(heldAnswered, false);
    await engine.close();
    for (const answer of await Promise.allSettled(held))
      if (answer.status === 'fulfilled') await answer.value.body.dump();
  });
});
