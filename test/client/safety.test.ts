import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaEnhanceClient, MediaEnhanceError } from '../../src';
import { makeWav } from '../fixtures/media';

const KEY = 'sk-test-0123456789abcdef';

async function listen(handler: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('client safety: the key, redirects and partial files', function () {
  const servers: Server[] = [];
  let dir: string;
  beforeEach(async () => {
    dir = await fsp.mkdtemp(join(tmpdir(), 'me-safety-'));
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map(close));
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('follows a redirect to another origin without the key, and keeps it for its own origin', async () => {
    const seenElsewhere: IncomingHttpHeaders[] = [];
    const seenAtService: IncomingHttpHeaders[] = [];
    const body = makeWav(0.1, 8_000);
    const storage = await listen((req, res) => {
      seenElsewhere.push(req.headers);
      res.writeHead(200, {
        'content-type': 'audio/wav',
        'content-length': body.length,
        'content-disposition': 'attachment; filename="take_enhanced.wav"',
      });
      res.end(body);
    });
    const service = await listen((req, res) => {
      seenAtService.push(req.headers);
      if (req.url === '/v2/medias/m1/file') {
        res.writeHead(302, { location: '/v2/medias/m1/file-here' }); // same origin first
      } else {
        res.writeHead(307, { location: `${storage.url}/bucket/m1.wav` });
      }
      res.end();
    });
    servers.push(storage.server, service.server);
    const client = new MediaEnhanceClient({ baseUrl: service.url, apiKey: KEY });
    const file = await client.downloadToFile('m1', dir);
    await client.close();
    assert.equal(file.path, join(dir, 'take_enhanced.wav'));
    assert.ok((await fsp.readFile(file.path)).equals(body));
    assert.equal(seenAtService.length, 2);
    assert.ok(
      seenAtService.every((h) => h['x-api-key'] === KEY),
      'the service itself gets the key on every hop',
    );
    assert.equal(seenElsewhere.length, 1);
    assert.equal(seenElsewhere[0]['x-api-key'], undefined, 'the key went to another origin');
    assert.ok(!JSON.stringify(seenElsewhere[0]).includes(KEY));
  });

  it('gives up after 5 redirects', async () => {
    let hops = 0;
    const service = await listen((_req, res) => {
      hops++;
      res.writeHead(302, { location: `/v2/medias/loop${hops}/file` });
      res.end();
    });
    servers.push(service.server);
    const client = new MediaEnhanceClient({ baseUrl: service.url, apiKey: KEY, retry: { maxRetries: 0 } });
    const err = (await client.downloadToFile('m1', join(dir, 'x.wav')).catch((e: unknown) => e)) as MediaEnhanceError;
    await client.close();
    assert.equal(err.code, 'HTTP');
    assert.match(err.message, /more than 5 redirects/);
    assert.equal(hops, 6);
  });

  it('removes the key from an error even when the service echoes it back', async () => {
    const service = await listen((req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: `bad key ${String(req.headers['x-api-key'])} for this operation` }));
    });
    servers.push(service.server);
    const client = new MediaEnhanceClient({ baseUrl: service.url, apiKey: KEY });
    const err = (await client.getMetadata('m1').catch((e: unknown) => e)) as MediaEnhanceError;
    await client.close();
    assert.equal(err.code, 'HTTP');
    assert.match(err.message, /bad key \[redacted\] for this operation/);
    assert.ok(!`${err.message}${err.stack}${String(err.details)}`.includes(KEY));
  });

  it('gives up with TIMEOUT when the service does not answer within requestTimeoutMs', async () => {
    const service = await listen(() => {
      // accepts the request and never answers
    });
    servers.push(service.server);
    const client = new MediaEnhanceClient({
      baseUrl: service.url,
      apiKey: KEY,
      requestTimeoutMs: 200,
      retry: { maxRetries: 1, baseDelayMs: 10 },
    });
    const err = (await client.getMetadata('m1').catch((e: unknown) => e)) as MediaEnhanceError;
    await client.close();
    assert.equal(err.code, 'TIMEOUT');
    assert.match(err.message, /no answer within 200 ms/);
  });

  it('reports an error body of unknown shape by its status and a bounded excerpt', async () => {
    const page = `<html><body>${'Bad gateway. '.repeat(200)}</body></html>`;
    const service = await listen((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(page);
    });
    servers.push(service.server);
    const client = new MediaEnhanceClient({ baseUrl: service.url, apiKey: KEY, retry: { maxRetries: 0 } });
    const err = (await client.getMetadata('m1').catch((e: unknown) => e)) as MediaEnhanceError;
    await client.close();
    assert.equal(err.code, 'HTTP');
    assert.equal(err.status, 502);
    assert.match(
      err.message,
      /^<html><body>Bad gateway\. (Bad gateway\. )*Bad gat[^(]*\.\.\. \(GET \/v2\/medias\/m1\/metadata: HTTP 502\)$/,
    );
    assert.ok(err.message.length < 400, `${err.message.length} characters`);
    assert.equal(err.retryable, true);
  });

  it('leaves no file, partial or temporary, when a download fails mid-way (resumable or not)', async () => {
    const service = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': 1_000_000 });
      res.write(Buffer.alloc(100_000));
      setTimeout(() => res.destroy(), 20);
    });
    servers.push(service.server);
    const client = new MediaEnhanceClient({
      baseUrl: service.url,
      apiKey: KEY,
      retry: { maxRetries: 2, baseDelayMs: 10 },
    });
    for (const resumable of [false, true]) {
      const err = (await client
        .downloadToFile('m1', join(dir, 'episode.wav'), { resumable })
        .catch((e: unknown) => e)) as MediaEnhanceError;
      assert.ok(err instanceof MediaEnhanceError);
      assert.equal(err.code, 'NETWORK');
      assert.deepEqual(await fsp.readdir(dir), [], `resumable: ${resumable}`);
    }
    await client.close();
  });

  it('resumes a broken download with a Range request instead of starting over', async () => {
    const body = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    const ranges: (string | undefined)[] = [];
    const service = await listen((req, res) => {
      ranges.push(req.headers.range);
      const match = /bytes=(\d+)-/.exec(req.headers.range ?? '');
      if (!match) {
        res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': body.length, 'accept-ranges': 'bytes' });
        res.write(body.subarray(0, 120_000));
        setTimeout(() => res.destroy(), 20);
        return;
      }
      const start = Number(match[1]);
      res.writeHead(206, {
        'content-type': 'audio/wav',
        'content-length': body.length - start,
        'content-range': `bytes ${start}-${body.length - 1}/${body.length}`,
      });
      res.end(body.subarray(start));
    });
    servers.push(service.server);
    const client = new MediaEnhanceClient({
      baseUrl: service.url,
      apiKey: KEY,
      retry: { maxRetries: 2, baseDelayMs: 10 },
    });
    const target = join(dir, 'episode.wav');
    const file = await client.downloadToFile('m1', target);
    await client.close();
    assert.ok((await fsp.readFile(target)).equals(body));
    assert.equal(file.size, body.length);
    assert.equal(ranges[0], undefined);
    assert.match(ranges[1] ?? '', /^bytes=\d+-$/);
    assert.ok(Number(/\d+/.exec(ranges[1]!)![0]) > 0);
    assert.deepEqual(await fsp.readdir(dir), ['episode.wav']);
  });

  it('stops a download waiting to retry as soon as it is aborted: ABORTED, and no partial file', async () => {
    const controller = new AbortController();
    const body = Buffer.alloc(200_000, 7);
    const service = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': body.length });
      res.write(body.subarray(0, 50_000));
      setTimeout(() => {
        res.destroy(); // the connection breaks: the client sleeps before resuming...
        setTimeout(() => controller.abort(), 300); // ...and is aborted while it sleeps
      }, 20);
    });
    servers.push(service.server);
    // A retry delay of about 20 s: without the abort, the test would time out.
    const client = new MediaEnhanceClient({
      baseUrl: service.url,
      apiKey: KEY,
      retry: { maxRetries: 2, baseDelayMs: 20_000 },
      random: () => 0.99,
    });
    const started = Date.now();
    const err = (await client
      .downloadToFile('m1', join(dir, 'episode.wav'), { signal: controller.signal })
      .catch((e: unknown) => e)) as MediaEnhanceError;
    await client.close();
    assert.ok(err instanceof MediaEnhanceError, String(err));
    assert.equal(err.code, 'ABORTED');
    assert.ok(Date.now() - started < 5_000);
    assert.deepEqual(await fsp.readdir(dir), []);
  });

  describe('resumable downloads (a later call continues from the kept temporary file)', () => {
    const body = Buffer.from(Array.from({ length: 400_000 }, (_, i) => (i * 7) % 253));
    /** Serves `body` with Range support; the first whole answer stops after `cutAt` bytes and waits. */
    async function rangeService(cutAt?: number) {
      const ranges: (string | undefined)[] = [];
      const service = await listen((req, res) => {
        ranges.push(req.headers.range);
        const match = /bytes=(\d+)-/.exec(req.headers.range ?? '');
        const start = match ? Number(match[1]) : 0;
        if (start >= body.length) {
          res.writeHead(416, { 'content-range': `bytes */${body.length}` });
          return res.end();
        }
        const headers = {
          'content-type': 'audio/wav',
          'accept-ranges': 'bytes',
          'content-length': body.length - start,
        };
        if (match)
          res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` });
        else res.writeHead(200, headers);
        if (cutAt !== undefined && !match) {
          res.write(body.subarray(0, cutAt)); // then nothing more: the caller aborts meanwhile
          return;
        }
        res.end(body.subarray(start));
      });
      servers.push(service.server);
      return { url: service.url, ranges };
    }

    it('an aborted download keeps its part; the next call for the same file asks only for the rest', async () => {
      const service = await rangeService(150_000);
      const client = new MediaEnhanceClient({
        baseUrl: service.url,
        apiKey: KEY,
        retry: { maxRetries: 2, baseDelayMs: 10 },
      });
      const controller = new AbortController();
      let received = 0;
      const first = client
        .downloadToFile('m1', dir, { resumable: true, signal: controller.signal, onProgress: (n) => (received = n) })
        .catch((e: unknown) => e);
      while (received < 150_000) await new Promise((r) => setTimeout(r, 10));
      controller.abort();
      assert.equal(((await first) as MediaEnhanceError).code, 'ABORTED');
      const parts = await fsp.readdir(dir);
      assert.deepEqual(parts, ['.m1.ENHANCED.part'], 'the part is kept, hidden, under a name the next call finds');
      assert.equal((await fsp.stat(join(dir, parts[0]))).size, 150_000);

      const file = await client.downloadToFile('m1', dir, { resumable: true });
      await client.close();
      assert.deepEqual(service.ranges, [undefined, 'bytes=150000-']);
      assert.ok((await fsp.readFile(file.path)).equals(body), 'the joined file is the whole file, byte for byte');
      assert.deepEqual(await fsp.readdir(dir), ['m1_enhanced']);
    });

    it('a resumable download stopped while the service is unreachable keeps its part for the next call', async () => {
      const down = await listen(() => undefined);
      const url = down.url;
      await close(down.server); // nothing listens there now: every connection is refused
      await fsp.writeFile(join(dir, '.m1.ENHANCED.part'), body.subarray(0, 1000));
      const client = new MediaEnhanceClient({ baseUrl: url, apiKey: KEY, retry: { baseDelayMs: 20 } });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const err = (await client
        .downloadToFile('m1', dir, { resumable: true, signal: controller.signal })
        .catch((e: unknown) => e)) as MediaEnhanceError;
      await client.close();
      assert.equal(err.code, 'ABORTED');
      assert.deepEqual(await fsp.readdir(dir), ['.m1.ENHANCED.part']);
    });

    it('a kept part as long as the file (cut before its rename) is fetched again whole', async () => {
      const service = await rangeService();
      await fsp.writeFile(join(dir, '.m1.ENHANCED.part'), body);
      const client = new MediaEnhanceClient({
        baseUrl: service.url,
        apiKey: KEY,
        retry: { maxRetries: 2, baseDelayMs: 10 },
      });
      const file = await client.downloadToFile('m1', dir, { resumable: true });
      await client.close();
      assert.deepEqual(service.ranges, [`bytes=${body.length}-`, undefined]);
      assert.ok((await fsp.readFile(file.path)).equals(body));
    });
  });
});
