// The access log tells what happened to each request, when it arrived, and never what a caller put
// in a query string.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { AccessLogEntry } from '../../src/engine';
import { makeWav } from '../fixtures/media';
import { call, KEY, multipart, startTestEngine, type TestEngine } from './helpers';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends an upload's head and the first part of its body, waits, then sends the rest or cuts the connection. */
function slowUpload(
  engine: TestEngine,
  pauseMs: number,
  finish: boolean,
): Promise<{ lastByteAt: number; received: string }> {
  const { body, headers } = multipart(makeWav(1, 16_000), 'slow.wav');
  return new Promise((resolve, reject) => {
    let received = '';
    let lastByteAt = 0;
    const socket = connect(Number(new URL(engine.url).port), '127.0.0.1', () => {
      socket.write(
        `POST /v2/medias HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${KEY}\r\nContent-Type: ${headers['content-type']}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      socket.write(body.subarray(0, body.length / 2));
      setTimeout(() => {
        lastByteAt = Date.now();
        if (finish) socket.write(body.subarray(body.length / 2));
        else socket.destroy();
      }, pauseMs);
    });
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('close', () => resolve({ lastByteAt, received }));
    socket.on('error', reject);
  });
}

/** The log entry of the one request to `path`, once the engine has written it. */
async function entryFor(entries: AccessLogEntry[], method: string, path: string): Promise<AccessLogEntry> {
  for (let i = 0; ; i++) {
    const found = entries.filter((e) => e.method === method && e.path === path);
    if (found.length > 0) return found[found.length - 1];
    if (i > 100) assert.fail(`no log entry for ${method} ${path}`);
    await sleep(20);
  }
}

describe('engine: access log', function () {
  let engine: TestEngine;
  const entries: AccessLogEntry[] = [];
  before(async () => {
    engine = await startTestEngine({ onRequest: (entry) => entries.push(entry) });
  });
  after(async () => {
    await engine.dispose();
  });

  it('logs an upload the client cut off as 499 aborted, not 200', async () => {
    await slowUpload(engine, 100, false);
    const entry = await entryFor(entries, 'POST', '/v2/medias');
    assert.equal(entry.status, 499);
    assert.equal(entry.aborted, true);
    assert.match(engine.logLines.at(-1)!, / POST \/v2\/medias 499 [\d.]+ms aborted$/);
  });

  it('stamps each line with the time the request arrived, not the time it was written', async () => {
    entries.length = 0;
    const { lastByteAt, received } = await slowUpload(engine, 1_000, true);
    assert.match(received, /^HTTP\/1\.1 201 /);
    const entry = await entryFor(entries, 'POST', '/v2/medias');
    const line = engine.logLines.find((l) => l.includes(' POST /v2/medias 201 '))!;
    const stamped = Date.parse(line.split(' ')[0]);
    assert.equal(stamped, entry.at);
    assert.ok(stamped < lastByteAt, 'the request arrived before its body ended, and long before its answer was logged');
    assert.equal(entry.aborted, false);
  });

  it('keeps a valid step from a query string and nothing else: a key put there never reaches the log', async () => {
    const secret = 'sk-live-do-not-log-me';
    await call(`${engine.url}/v2/medias/q/file?step=PRE&api_key=${secret}`, { headers: { 'x-api-key': KEY } });
    await call(`${engine.url}/v2/medias/q/metadata?${secret}`, { headers: { 'x-api-key': KEY } });
    await call(`${engine.url}/v2/medias/q/file?step=${secret}`, { headers: { 'x-api-key': KEY } });
    await sleep(50);
    assert.ok(engine.logLines.every((l) => !l.includes(secret) && !l.includes(KEY)));
    assert.ok(engine.logLines.some((l) => l.includes(' GET /v2/medias/q/file?step=PRE&… 404 ')));
    assert.ok(engine.logLines.some((l) => l.includes(' GET /v2/medias/q/metadata?… 404 ')));
    // Shaped like an output's name (several-outputs), it is a well-formed step for a media that does not
    // exist (404), and still no step of the interface: left out of the log.
    assert.ok(engine.logLines.some((l) => l.includes(' GET /v2/medias/q/file?… 404 ')));
  });
});
