// Answers that would hang the client or fill its memory: a service's endless JSON, a Redis whose
// replies are not the limiter's scripts' or never end. Each is a failure found fast, never a wait.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { MediaEnhanceClient, MediaEnhanceError } from '../../src';
import type { SharingState } from '../../src/client/shared-limiter/redis-store';
import { MAX_JSON_ANSWER_BYTES } from '../../src/client/transport';
import { startFakeRedis, type FakeRedis } from '../fixtures/fake-redis';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

/** Rejects when `promise` has not settled within `ms`: a hang shows as a failure, not a stuck run. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('client: a metadata answer without end', function () {
  this.timeout(60_000);
  let service: Server;
  let baseUrl: string;
  const sockets = new Set<Socket>();
  let closedSockets = 0;
  let sentBytes = 0;

  before(async () => {
    service = createServer((req, res) => {
      req.resume();
      if (req.url?.includes('announced')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(1_500_000_000) });
        res.write('{"uid":"');
        return;
      }
      // About 1.5 GB of one JSON string, streamed as fast as the client reads it.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"uid":"m","enhancement_status":"PENDING","padding":"');
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      const pump = () => {
        while (!res.destroyed && sentBytes < 1_500_000_000) {
          sentBytes += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end('"}');
      };
      pump();
    });
    service.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => {
        sockets.delete(socket);
        closedSockets++;
      });
    });
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    baseUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  });
  after(() => {
    for (const socket of sockets) socket.destroy();
    service.close();
  });

  it('fails fast with a clear error, drops the connection and keeps memory low', async () => {
    const client = new MediaEnhanceClient({ baseUrl, apiKey: 'k' });
    try {
      const rssBefore = process.memoryUsage().rss;
      const err = (await within(
        20_000,
        'getMetadata',
        client.getMetadata('endless').then(
          () => assert.fail('resolved'),
          (e: unknown) => e,
        ),
      )) as MediaEnhanceError;
      assert.ok(err instanceof MediaEnhanceError, String(err));
      assert.equal(err.code, 'HTTP');
      assert.match(err.message, /larger than 4 MiB, the most the client reads; the connection was dropped/);
      assert.match(err.message, /GET \/v2\/medias\/endless/);
      const growth = process.memoryUsage().rss - rssBefore;
      assert.ok(growth < 64 * 1024 * 1024, `memory grew ${Math.round(growth / 1e6)} MB`);
      assert.ok(sentBytes < 64 * 1024 * 1024, `the service sent ${Math.round(sentBytes / 1e6)} MB`);
      const deadline = Date.now() + 5_000;
      while (sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(closedSockets >= 1 && sockets.size === 0, 'the connection was dropped, not kept for another request');
      assert.equal(MAX_JSON_ANSWER_BYTES, 4 * 1024 * 1024);
    } finally {
      await client.close();
    }
  });

  it('refuses an answer whose announced length is over the bound without reading it', async () => {
    const client = new MediaEnhanceClient({ baseUrl, apiKey: 'k' });
    try {
      await assert.rejects(
        within(10_000, 'getMetadata', client.getMetadata('announced')),
        (err: MediaEnhanceError) => err.code === 'HTTP' && /larger than 4 MiB/.test(err.message),
      );
    } finally {
      await client.close();
    }
  });
});

describe('client: a Redis that does not answer as the limiter scripts do', function () {
  this.timeout(60_000);
  let engine: TestEngine;
  let redis: FakeRedis | undefined;
  const wav = makeWav(0.1, 8_000);

  before(async () => {
    engine = await startTestEngine();
  });
  after(async () => {
    await engine.dispose();
  });
  afterEach(async () => {
    await redis?.stop();
    redis = undefined;
  });

  /** A client sharing its limits through the fake Redis, and what it told of its sharing. */
  function sharedClient(url: string): { client: MediaEnhanceClient; told: [SharingState, string | undefined][] } {
    const told: [SharingState, string | undefined][] = [];
    const client = new MediaEnhanceClient({
      baseUrl: engine.url,
      apiKey: engine.apiKey,
      sharedLimiter: { redisUrl: url, onStateChange: (state, reason) => told.push([state, reason]) },
    });
    return { client, told };
  }

  for (const [name, answer] of [
    ['+OK', '+OK\r\n'],
    ['*0', '*0\r\n'],
    ['a number', ':7\r\n'],
    ['an array of words', '*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n'],
  ] as const) {
    it(`answering ${name} to the scripts: falls back to the local limiter at once and says why`, async () => {
      redis = await startFakeRedis(answer);
      const { client, told } = sharedClient(redis.url);
      try {
        const uploaded = await within(10_000, 'uploadMedia', client.uploadMedia({ file: wav }));
        assert.equal(typeof uploaded.uid, 'string');
        await within(10_000, 'getMetadata', client.getMetadata(uploaded.uid));
        assert.equal(client.sharingState(), 'unreachable');
        const warning = told.find(([state]) => state === 'unreachable');
        assert.ok(warning, JSON.stringify(told));
        assert.match(
          warning[1] ?? '',
          /^Redis answered taking a place with .*, not three whole numbers: not the limiter's script$/,
        );
      } finally {
        await client.close();
      }
    });
  }

  it('sending a reply that never ends: falls back and drops the connection before the reply fills the memory', async () => {
    redis = await startFakeRedis({ endless: true });
    const { client, told } = sharedClient(redis.url);
    try {
      const rssBefore = process.memoryUsage().rss;
      const uploaded = await within(10_000, 'uploadMedia', client.uploadMedia({ file: wav }));
      assert.equal(typeof uploaded.uid, 'string');
      assert.equal(client.sharingState(), 'unreachable');
      const warning = told.find(([state]) => state === 'unreachable');
      assert.match(
        warning?.[1] ?? '',
        /Redis sent more than 64 KiB without answering the limiter; the connection was dropped/,
      );
      const deadline = Date.now() + 5_000;
      while (redis.closed() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(redis.closed() >= 1, 'the client closed the connection');
      // Whatever the fake sent sat in socket buffers or was read and dropped: far from the 2 GB it announced.
      assert.ok(redis.endlessBytesSent() < 32 * 1024 * 1024, `${redis.endlessBytesSent()} bytes sent`);
      const growth = process.memoryUsage().rss - rssBefore;
      assert.ok(growth < 64 * 1024 * 1024, `memory grew ${Math.round(growth / 1e6)} MB`);
    } finally {
      await client.close();
    }
  });
});
