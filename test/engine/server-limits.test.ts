// The server's own limits: what a client meets when one is reached is a clear status, never a hang.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { makeWav } from '../fixtures/media';
import { KEY, metadata, multipart, OTHER_KEY, startTestEngine, upload, type TestEngine } from './helpers';
import { detailText } from './answers';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw connection to the engine: what it receives, and a promise of its close. */
function open(engine: TestEngine): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect(Number(new URL(engine.url).port), '127.0.0.1');
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined); // a reset is one of the outcomes looked at, through `closed`
    socket.once('connect', () => resolve({ socket, received: () => text, closed }));
    socket.once('error', reject);
  });
}

/** The head of an upload whose body will not all be sent. */
function uploadHead(key: string): { head: string; body: Buffer } {
  const { body, headers } = multipart(makeWav(1, 16_000), 'slow.wav');
  const head = `POST /v2/medias HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nContent-Type: ${headers['content-type']}\r\nContent-Length: ${body.length}\r\n\r\n`;
  return { head, body };
}

/** Retries `attempt` until it gives `status`: the engine learns of closed connections a moment later. */
async function eventually(attempt: () => Promise<{ status: number }>, status: number): Promise<void> {
  for (let i = 0; ; i++) {
    const res = await attempt();
    if (res.status === status) return;
    if (i > 100) assert.fail(`still ${res.status}, not ${status}`);
    await sleep(50);
  }
}

describe('engine: server limits', function () {
  let engine: TestEngine | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await engine?.dispose();
    engine = undefined;
  });

  it('a request beyond the connection cap gets 503 with Retry-After at once; served again once connections close', async () => {
    engine = await startTestEngine({ server: { maxConnections: 5 } });
    for (let i = 0; i < 5; i++) sockets.push((await open(engine)).socket); // idle: they send nothing
    const agent = new Agent({ connections: 1 });
    try {
      const res = await request(`${engine.url}/v2/medias/x/metadata`, {
        headers: { 'x-api-key': KEY },
        dispatcher: agent,
      });
      const body = (await res.body.json()) as { detail: string };
      assert.equal(res.statusCode, 503);
      assert.match(body.detail, /more connections open than the 5 it serves at once; retry later/);
      assert.ok(Number(res.headers['retry-after']) > 0);
      assert.equal(
        res.headers['x-ratelimit-limit'],
        '100000',
        'an answer of a limited operation carries the rate-limit headers',
      );
    } finally {
      await agent.close();
    }
    for (const s of sockets.splice(0)) s.destroy();
    await eventually(() => metadata(engine!, 'x'), 404);
  });

  it('an upload beyond the uploads in progress of its key gets 503 with Retry-After; another key is served', async () => {
    engine = await startTestEngine({ server: { maxUploadsPerKey: 2 } });
    for (let i = 0; i < 2; i++) {
      const { socket } = await open(engine);
      const { head, body } = uploadHead(KEY);
      socket.write(head);
      socket.write(body.subarray(0, 1000)); // and then nothing: an upload in progress
      sockets.push(socket);
    }
    const wav = makeWav(0.2, 8_000);
    await eventually(() => upload(engine!, wav, 'third.wav'), 503);
    const third = await upload(engine, wav, 'third.wav');
    assert.equal(third.status, 503);
    assert.match(detailText(third.json), /already has 2 uploads in progress.*retry when one has finished/);
    assert.ok(Number(third.headers['retry-after']) > 0);
    assert.equal(third.headers['x-ratelimit-limit'], '10');
    assert.equal(
      (await upload(engine, wav, 'other.wav', {}, '/v2/medias', OTHER_KEY)).status,
      201,
      'each key has its own uploads',
    );
    for (const s of sockets.splice(0)) s.destroy();
    await eventually(() => upload(engine!, wav, 'later.wav'), 201);
  });

  it('answers 431 to a head over the size limit and to more header fields than allowed, and keeps serving', async () => {
    engine = await startTestEngine({ server: { maxHeaderBytes: 8 * 1024, maxHeaderCount: 50 } });
    const big = await request(`${engine.url}/v2/medias/x/metadata`, {
      headers: { 'x-api-key': KEY, 'x-filler': 'a'.repeat(10 * 1024) },
    }).catch((err: Error) => err);
    if (big instanceof Error) assert.fail(`an answer, not ${String(big)}`);
    assert.equal(big.statusCode, 431);
    await big.body.dump();
    const many: Record<string, string> = { 'x-api-key': KEY };
    for (let i = 0; i < 60; i++) many[`x-h${i}`] = 'v';
    const flood = await request(`${engine.url}/v2/medias/x/metadata`, { headers: many });
    assert.equal(flood.statusCode, 431);
    assert.match(((await flood.body.json()) as { detail: string }).detail, /more than 50 header fields/);
    const fine: Record<string, string> = { 'x-api-key': KEY };
    for (let i = 0; i < 40; i++) fine[`x-h${i}`] = 'v';
    const served = await request(`${engine.url}/v2/medias/x/metadata`, { headers: fine });
    await served.body.dump();
    assert.equal(served.statusCode, 404);
  });

  it('closes a connection whose headers do not arrive in time with 408 (slowloris), and keeps serving others', async () => {
    engine = await startTestEngine({ server: { headersTimeoutMs: 500 } });
    const slow = await open(engine);
    sockets.push(slow.socket);
    slow.socket.write('GET /v2/medias/x/metadata HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // the head never ends
    assert.equal((await metadata(engine, 'x')).status, 404, 'others are served meanwhile');
    await slow.closed;
    assert.match(slow.received(), /^HTTP\/1\.1 408 /);
  });

  it('closes an upload that stalls with 408 and removes its partial file', async () => {
    engine = await startTestEngine({ server: { idleTimeoutMs: 500 } });
    const stalled = await open(engine);
    sockets.push(stalled.socket);
    const { head, body } = uploadHead(KEY);
    stalled.socket.write(head);
    stalled.socket.write(body.subarray(0, body.length / 2));
    await stalled.closed;
    assert.match(stalled.received(), /^HTTP\/1\.1 408 [^]*the request stalled: nothing arrived for 0\.5 s/);
    const incoming = join(engine.dataDir, 'media', '.incoming');
    for (let i = 0; (await fsp.readdir(incoming)).length > 0; i++) {
      if (i > 100) assert.fail('the partial upload is still on disk');
      await sleep(50);
    }
    assert.ok(engine.logLines.some((l) => / POST \/v2\/medias 408 /.test(l)));
  });

  it('does not cut an honest slow upload that takes longer than every timeout but the idle one', async () => {
    engine = await startTestEngine({
      server: { headersTimeoutMs: 300, idleTimeoutMs: 2_000, keepAliveTimeoutMs: 300 },
    });
    const slow = await open(engine);
    sockets.push(slow.socket);
    const { head, body } = uploadHead(KEY);
    slow.socket.write(head);
    const pieces = 8;
    for (let i = 0; i < pieces; i++) {
      slow.socket.write(body.subarray((i * body.length) / pieces, ((i + 1) * body.length) / pieces));
      await sleep(150); // 8 x 150 ms: well past the head and keep-alive timeouts in all
    }
    for (let i = 0; !/\r\n\r\n/.test(slow.received()); i++) {
      if (i > 200) assert.fail(`no answer: ${slow.received()}`);
      await sleep(25);
    }
    assert.match(slow.received(), /^HTTP\/1\.1 201 /);
  });

  it('closes an idle keep-alive connection after keepAliveTimeoutMs', async () => {
    engine = await startTestEngine({ server: { keepAliveTimeoutMs: 300 } });
    const idle = await open(engine);
    sockets.push(idle.socket);
    idle.socket.write(`GET /v2/medias/x/metadata HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${KEY}\r\n\r\n`);
    await idle.closed;
    assert.match(idle.received(), /^HTTP\/1\.1 404 /);
  });
});
