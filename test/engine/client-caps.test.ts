// What one client may hold of the server: connections per client address (slow connections of one
// address cannot take every place), and `?wait=` requests held at once per key.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { makeWav } from '../fixtures/media';
import { KEY, metadata, multipart, startTestEngine, upload, type TestEngine } from './helpers';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the media's metadata on disk says PROCESSING (held requests are woken once it is written). */
async function processing(engine: TestEngine, uid: string): Promise<void> {
  const meta = join(engine.dataDir, 'media', uid, 'meta.json');
  while (!(await fsp.readFile(meta, 'utf8').catch(() => '')).includes('"PROCESSING"')) await sleep(50);
  await sleep(200);
}

/** A `?wait=` metadata request of `uid`, as its head on the wire. */
const waitHead = (uid: string, waitS: number) =>
  `GET /v2/medias/${uid}/metadata?wait=${waitS} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${KEY}\r\n\r\n`;

/** A whole small upload, as it goes on the wire. */
function wholeUpload(): Buffer {
  const { body, headers } = multipart(makeWav(0.2, 8_000), 'queued.wav');
  const head = `POST /v2/medias HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${KEY}\r\nContent-Type: ${headers['content-type']}\r\nContent-Length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), body]);
}

/** Whether a `?wait=` request was held (it declares the engine's wait) or answered at once as the media stands (0). */
async function wasHeld(engine: TestEngine, uid: string): Promise<boolean> {
  const res = await request(`${engine.url}/v2/medias/${uid}/metadata?wait=1`, { headers: { 'x-api-key': KEY } });
  await res.body.dump();
  assert.equal(res.statusCode, 200);
  return res.headers['x-metadata-wait'] !== '0';
}

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
    await processing(engine, uid); // and so for 30 s
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

  it('gives back the places of requests pipelined behind a held wait once their connection drops', async () => {
    engine = await startTestEngine({
      metadataWaitS: 20,
      processingDelayMs: 30_000,
      server: { maxUploadsPerKey: 2, maxHeldWaitsPerKey: 4 },
    });
    const uid = String((await upload(engine, makeWav(0.2, 16_000), 'a.wav')).json.uid);
    await processing(engine, uid);
    // On each of two connections a held wait, then a second wait and an upload queued behind its answer.
    const pipelined = [];
    for (let i = 0; i < 2; i++) {
      const socket = connect(Number(new URL(engine.url).port), '127.0.0.1');
      socket.on('error', () => undefined);
      sockets.push(socket);
      socket.write(Buffer.concat([Buffer.from(waitHead(uid, 20) + waitHead(uid, 20)), wholeUpload()]));
      pipelined.push(socket);
    }
    // The queued uploads are stored (their answers wait their turn), so every request on them was read.
    const medias = () =>
      fsp.readdir(join(engine!.dataDir, 'media')).then((names) => names.filter((n) => n !== '.incoming'));
    while ((await medias()).length < 3) await sleep(50);
    await sleep(200);
    // Both uploads and all four waits hold their places, so the key has none left of either.
    assert.equal((await upload(engine, makeWav(0.2, 8_000), 'more.wav')).status, 503);
    assert.equal(await wasHeld(engine, uid), false);
    for (const socket of pipelined) socket.destroy();
    // The client is gone: every place comes back (the engine learns of the close a moment later).
    for (let i = 0; (await upload(engine, makeWav(0.2, 8_000), 'later.wav')).status !== 201; i++) {
      if (i > 100) assert.fail('an upload queued on a dropped connection kept its place');
      await sleep(50);
    }
    // All four places of waits are back, and no more than four (none was given back twice).
    const held = await Promise.all([0, 1, 2, 3, 4].map(() => wasHeld(engine!, uid)));
    assert.equal(held.filter(Boolean).length, 4, 'a wait queued on a dropped connection kept its place');
    await engine.close();
  });
});
