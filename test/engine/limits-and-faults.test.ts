import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { makeWav } from '../fixtures/media';
import {
  call,
  KEY,
  metadata,
  multipart,
  OTHER_KEY,
  settled,
  startTestEngine,
  upload,
  type TestEngine,
} from './helpers';
import { detailText } from './answers';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const wav = makeWav(0.2, 8_000);

describe('engine: malformed requests', function () {
  it('answers 400 to a request target no URL parser accepts, and keeps serving', async () => {
    const engine = await startTestEngine();
    try {
      const port = Number(new URL(engine.url).port);
      const answer = await new Promise<string>((resolve, reject) => {
        let text = '';
        const socket = connect(port, '127.0.0.1', () =>
          socket.write('GET //[ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'),
        );
        socket.on('data', (chunk) => (text += chunk.toString()));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      assert.match(answer, /^HTTP\/1\.1 400 /);
      const res = await request(`${engine.url}/v2/medias/none/metadata`, { headers: { 'x-api-key': KEY } });
      await res.body.dump();
      assert.equal(res.statusCode, 404);
    } finally {
      await engine.dispose();
    }
  });
});

describe('engine: rate limits', function () {
  let engine: TestEngine | undefined;
  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
  });

  it('puts the four X-RateLimit-* headers on every answer of a limited operation, errors included', async () => {
    engine = await startTestEngine({ limits: { getMetadata: 5 }, windowMs: 2_000 });
    const first = await metadata(engine, 'unknown-uid');
    assert.equal(first.status, 404);
    assert.equal(first.headers['x-ratelimit-limit'], '5');
    assert.equal(first.headers['x-ratelimit-remaining'], '4');
    assert.equal(first.headers['x-ratelimit-used'], '1');
    assert.equal(first.headers['x-ratelimit-window'], '2');
    const v1 = await call(`${engine.url}/v1/media/enhance-json`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(v1.headers['x-ratelimit-limit'], undefined, 'v1 operations have no limit by default');
  });

  it('puts them on 401, injected 500 and 503, and an unexpected 500 too, with the count as it stands', async () => {
    const expectHeaders = (res: { status: number; headers: Record<string, unknown> }, used: string, what: string) => {
      assert.equal(res.headers['x-ratelimit-limit'], '5', what);
      assert.equal(res.headers['x-ratelimit-used'], used, what);
      assert.equal(res.headers['x-ratelimit-remaining'], String(5 - Number(used)), what);
      assert.equal(res.headers['x-ratelimit-window'], '2', what);
    };
    engine = await startTestEngine({ limits: { downloadFile: 5 }, windowMs: 2_000 });
    const noKey = await call(`${engine.url}/v2/medias/x/file`);
    assert.equal(noKey.status, 401);
    expectHeaders(noKey, '0', '401: a caller without a key has used nothing');
    const wrongKey = await call(`${engine.url}/v2/medias/x/file`, { headers: { 'x-api-key': 'not-a-key' } });
    assert.equal(wrongKey.status, 401);
    expectHeaders(wrongKey, '0', '401 for a wrong key');

    // An unexpected fault: the file of a completed media disappeared from the disk.
    const { json } = await upload(engine, wav, 'gone.wav');
    await settled(engine, json.uid);
    await fsp.rm(join(engine.dataDir, 'media', json.uid, 'output'));
    const broken = await call(`${engine.url}/v2/medias/${json.uid}/file`, { headers: { 'x-api-key': KEY } });
    assert.equal(broken.status, 500);
    assert.deepEqual(broken.json, { detail: 'internal error' });
    expectHeaders(broken, '1', 'unexpected 500');
    assert.ok(
      engine.errorLines.some((l) => /internal error: .*ENOENT/.test(l)),
      'the cause is in the engine log',
    );
    await engine.dispose();

    for (const faults of [{ error500Rate: 1 }, { error503Rate: 1 }]) {
      engine = await startTestEngine({ limits: { getMetadata: 5 }, windowMs: 2_000, faults });
      const injected = await metadata(engine, 'x');
      assert.equal(injected.status, faults.error500Rate ? 500 : 503);
      expectHeaders(injected, '0', `injected ${injected.status}: not counted`);
      await engine.dispose();
    }
    engine = undefined;
  });

  it('answers 429 {detail} with Remaining 0, Used equal to Limit and Retry-After once the window is full', async () => {
    engine = await startTestEngine({ limits: { getMetadata: 3 }, windowMs: 2_000 });
    for (let i = 0; i < 3; i++) assert.equal((await metadata(engine, 'x')).status, 404);
    const over = await metadata(engine, 'x');
    assert.equal(over.status, 429);
    assert.equal(typeof over.json.detail, 'string');
    assert.equal(over.headers['x-ratelimit-remaining'], '0');
    assert.equal(over.headers['x-ratelimit-used'], '3');
    assert.equal(over.headers['x-ratelimit-limit'], '3');
    assert.equal(over.headers['x-ratelimit-window'], '2');
    assert.ok(Number(over.headers['retry-after']) >= 1 && Number(over.headers['retry-after']) <= 2);
  });

  it('is a rolling window, not a fixed one: requests spaced across a window boundary still count', async () => {
    engine = await startTestEngine({ limits: { getMetadata: 2 }, windowMs: 1_000 });
    assert.equal((await metadata(engine, 'x')).status, 404); // t = 0
    await sleep(600);
    assert.equal((await metadata(engine, 'x')).status, 404); // t = 600
    await sleep(500);
    // t = 1100: a fixed window starting at t = 1000 would be empty; the last second holds the one at 600.
    assert.equal((await metadata(engine, 'x')).status, 404);
    // ...and this one is the third in (100, 1100]: refused, until the one at 600 leaves the window.
    const refused = await metadata(engine, 'x');
    assert.equal(refused.status, 429);
    await sleep(600);
    assert.equal((await metadata(engine, 'x')).status, 404);
  });

  it('counts per key and per operation', async () => {
    engine = await startTestEngine({ limits: { getMetadata: 1, uploadMedia: 1 }, windowMs: 5_000 });
    assert.equal((await metadata(engine, 'x', KEY)).status, 404);
    assert.equal((await metadata(engine, 'x', KEY)).status, 429);
    assert.equal((await metadata(engine, 'x', OTHER_KEY)).status, 404, 'another key has its own window');
    assert.equal((await upload(engine, wav, 'a.wav')).status, 201, 'another operation has its own window');
  });

  it('does not count refused requests', async () => {
    engine = await startTestEngine({ limits: { getMetadata: 1 }, windowMs: 1_000 });
    await metadata(engine, 'x');
    for (let i = 0; i < 5; i++) assert.equal((await metadata(engine, 'x')).status, 429);
    await sleep(1_050);
    assert.equal((await metadata(engine, 'x')).status, 404);
  });
});

describe('engine: storage, restart and concurrency', function () {
  it('loses nothing accepted across a restart in the middle of processing, and the media completes', async () => {
    const first = await startTestEngine({ processingDelayMs: 60_000 });
    const accepted = await upload(first, wav, 'survivor.wav');
    assert.equal(accepted.status, 201);
    await sleep(100);
    assert.equal((await metadata(first, accepted.json.uid)).json.enhancement_status, 'PROCESSING');
    await first.close();

    const second = await startTestEngine({}, first.dataDir);
    try {
      const done = await settled(second, accepted.json.uid);
      assert.equal(done.enhancement_status, 'COMPLETED');
      assert.equal(done.file_name, 'survivor.wav');
      assert.equal(done.inserted_at, accepted.json.inserted_at);
      // Processed after the restart as any media is: a WAV at the target (a 0.2 s clip is measured whole).
      assert.ok(Math.abs(done.enhancement_params.output_loudness_lufs! - -16) <= 0.5);
      const file = await call(`${second.url}/v2/medias/${done.uid}/file`, { headers: { 'x-api-key': KEY } });
      assert.equal(file.status, 200);
      assert.equal(file.bytes.subarray(8, 12).toString('latin1'), 'WAVE');
    } finally {
      await second.dispose();
    }
  });

  it('never deletes a media whose meta.json it cannot parse, nor a folder it did not make; only its own folders that never got one go', async () => {
    const first = await startTestEngine();
    const accepted = await upload(first, wav, 'kept.wav');
    assert.equal(accepted.status, 201);
    await settled(first, accepted.json.uid);
    await first.close();
    const media = join(first.dataDir, 'media');
    const folder = join(media, accepted.json.uid);
    await fsp.writeFile(join(folder, 'meta.json'), '{"uid": "half a reco');
    // Cut off before its metadata: a uid's name, nothing but the engine's own files.
    const neverAnswered = join(media, randomUUID());
    await fsp.mkdir(neverAnswered);
    await fsp.writeFile(join(neverAnswered, 'input'), wav);
    // A person's folders where the data folder is (as a config node id `..` once made it): no meta.json either.
    await fsp.mkdir(join(media, 'podcast'));
    await fsp.writeFile(join(media, 'podcast', 'episode-1.wav'), wav);
    const lookalike = randomUUID();
    await fsp.mkdir(join(media, lookalike));
    await fsp.writeFile(join(media, lookalike, 'notes.txt'), 'mine');
    await fsp.writeFile(join(media, '.incoming', 'draft.wav'), wav);
    const cutUpload = randomUUID();
    await fsp.writeFile(join(media, '.incoming', cutUpload), wav.subarray(0, 100));

    const second = await startTestEngine({}, first.dataDir);
    try {
      assert.ok((await fsp.readdir(folder)).includes('input'), 'the accepted media is still on disk');
      assert.deepEqual(
        (await fsp.readdir(media)).sort(),
        ['.incoming', accepted.json.uid, 'podcast', lookalike].sort(),
        'only the folder the engine made and never answered for is gone',
      );
      assert.deepEqual(await fsp.readdir(join(media, 'podcast')), ['episode-1.wav']);
      assert.deepEqual(await fsp.readdir(join(media, lookalike)), ['notes.txt']);
      assert.deepEqual(await fsp.readdir(join(media, '.incoming')), ['draft.wav'], 'only the cut upload goes');
    } finally {
      await second.dispose();
    }
  });

  it('ends an enhance-json fetch that drips past its deadline FAILED, saying so', async () => {
    // Sends a WAV header, then a byte every 200 ms: each read is quick, the whole never ends.
    const dripping = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/wav' });
      res.write(wav.subarray(0, 44));
      const timer = setInterval(() => res.write(Buffer.alloc(1)), 200);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => dripping.listen(0, '127.0.0.1', resolve));
    const engine = await startTestEngine({ fetchTimeoutMs: 1_000 });
    try {
      const body = {
        file_download_url: `http://127.0.0.1:${(dripping.address() as AddressInfo).port}/slow.wav`,
        file_name: 'slow.wav',
        loudness_target_level: -16,
        loudness_peak_limit: -1,
        enhancement_level: 1,
        transcode_kind: null,
        model_arch: 'LARK_V2',
      };
      const res = await call(`${engine.url}/v1/media/enhance-json`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 201);
      const done = await settled(engine, res.json.generated_name, 10_000);
      assert.equal(done.enhancement_status, 'FAILED');
      assert.match(done.error!.message, /took longer than 1 s/);
    } finally {
      dripping.closeAllConnections();
      dripping.close();
      await engine.dispose();
    }
  });

  it('accepts 50 concurrent uploads from separate connections', async () => {
    const engine = await startTestEngine({ limits: { uploadMedia: 100 }, server: { maxUploadsPerKey: 50 } });
    const agents = Array.from({ length: 50 }, () => new Agent({ connections: 1 }));
    try {
      const results = await Promise.all(
        agents.map(async (agent, i) => {
          const { body, headers } = multipart(makeWav(0.1 + i / 1000, 8_000), `c${i}.wav`);
          const res = await request(`${engine.url}/v2/medias`, {
            method: 'POST',
            headers: { ...headers, 'x-api-key': KEY },
            body,
            dispatcher: agent,
          });
          return { status: res.statusCode, json: (await res.body.json()) as { uid: string; file_name: string } };
        }),
      );
      assert.ok(results.every((r) => r.status === 201));
      assert.equal(new Set(results.map((r) => r.json.uid)).size, 50);
      for (const [i, r] of results.entries()) {
        const done = await settled(engine, r.json.uid);
        assert.equal(done.file_name, `c${i}.wav`);
      }
    } finally {
      await Promise.all(agents.map((a) => a.close()));
      await engine.dispose();
    }
  });

  it('forgets a truncated upload: no media, no partial file', async () => {
    const engine = await startTestEngine();
    try {
      const { body, headers } = multipart(makeWav(1, 16_000), 'cut.wav');
      const port = Number(new URL(engine.url).port);
      await new Promise<void>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(
            `POST /v2/medias HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${KEY}\r\nContent-Type: ${headers['content-type']}\r\nContent-Length: ${body.length}\r\n\r\n`,
          );
          socket.write(body.subarray(0, Math.floor(body.length / 2)), () => setTimeout(() => socket.destroy(), 50));
        });
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
      await sleep(100);
      const media = (await fsp.readdir(join(engine.dataDir, 'media'))).filter((n) => n !== '.incoming');
      assert.deepEqual(media, []);
      assert.deepEqual(await fsp.readdir(join(engine.dataDir, 'media', '.incoming')), []);
    } finally {
      await engine.dispose();
    }
  });
});

describe('engine: fault injection', function () {
  let engine: TestEngine | undefined;
  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
  });

  it('error500Rate and error503Rate answer 500 and 503', async () => {
    engine = await startTestEngine({ faults: { error500Rate: 1 } });
    assert.equal((await metadata(engine, 'x')).status, 500);
    await engine.dispose();
    engine = await startTestEngine({ faults: { error503Rate: 1 } });
    assert.equal((await metadata(engine, 'x')).status, 503);
  });

  it('forced429 answers the next N limited requests 429 with full headers', async () => {
    engine = await startTestEngine({ faults: { forced429: 2 } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await metadata(engine, 'x')).status);
    assert.deepEqual(statuses, [429, 429, 404]);
  });

  it('resetRate cuts a response off halfway', async () => {
    engine = await startTestEngine({ faults: { resetRate: 1 } });
    const res = await request(`${engine.url}/v2/medias`, { method: 'POST', ...uploadInit() });
    const received: Buffer[] = [];
    await assert.rejects(async () => {
      for await (const chunk of res.body) received.push(chunk as Buffer);
    });
    assert.ok(Buffer.concat(received).length < Number(res.headers['content-length']));
  });

  it('dripRate sends a body slowly', async () => {
    engine = await startTestEngine({ faults: { dripRate: 1, dripBytesPerSecond: 2_000 } });
    const started = Date.now();
    const res = await upload(engine, wav, 'drip.wav');
    assert.equal(res.status, 201);
    const bytes = res.bytes.length;
    // A body of `bytes` at 2000 B/s cannot arrive sooner than this (a lower bound, not a speed check).
    assert.ok(Date.now() - started >= (bytes / 2_000) * 1000 * 0.8, `${bytes} bytes in ${Date.now() - started} ms`);
  });

  it('failProcessingRate ends processing FAILED with a reason, and processingDelayMs holds it in PROCESSING', async () => {
    engine = await startTestEngine({ faults: { failProcessingRate: 1 }, processingDelayMs: 300 });
    const { json } = await upload(engine, wav, 'doomed.wav');
    await sleep(100);
    assert.equal((await metadata(engine, json.uid)).json.enhancement_status, 'PROCESSING');
    const done = await settled(engine, json.uid);
    assert.equal(done.enhancement_status, 'FAILED');
    assert.equal(done.error!.code, 'PROCESSING_FAILED');
    const file = await call(`${engine.url}/v2/medias/${json.uid}/file`, { headers: { 'x-api-key': KEY } });
    assert.equal(file.status, 412);
    assert.match(detailText(file.json), /FAILED/);
  });
});

function uploadInit() {
  const { body, headers } = multipart(wav, 'reset.wav');
  return { headers: { ...headers, 'x-api-key': KEY }, body };
}
