import assert from 'node:assert/strict';
import { createReadStream, promises as fsp } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaEnhanceClient, MediaEnhanceError } from '../../src';
import { makeMp4, makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

const FAST_POLL = {
  initialMs: [50, 100] as [number, number],
  longMs: [100, 200] as [number, number],
  longAfterMs: 5_000,
};

async function tempDir(): Promise<string> {
  return fsp.mkdtemp(join(tmpdir(), 'me-client-'));
}

/** Serves one buffer on loopback, as a user's own file server would for enhance-json. */
async function serveFile(body: Buffer): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': body.length });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/speech.wav`, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * How long a test waits for a media to complete. Its job may be queued behind earlier tests' jobs on the
 * engine's worker, and a busy machine (other test processes beside this one) stretches them: these tests
 * claim what a completed media holds, not how fast it completes.
 */
const COMPLETES_WITHIN_MS = 60_000;

describe('client operations against the local engine', function () {
  this.timeout(4 * COMPLETES_WITHIN_MS); // one test waits for four media in turn
  let engine: TestEngine;
  let client: MediaEnhanceClient;
  let dir: string;
  const wav = makeWav(1, 48_000);
  /**
   * The fast model for tones sent to test the client: LARK_V2's DeepFilterNet3 takes a tone for noise,
   * and a fresh engine thread's first job with it spends seconds loading the network.
   */
  const FAST = { loudness_target: -16, true_peak: -1, enhancement_model: 'FINCH' } as const;

  before(async () => {
    engine = await startTestEngine();
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey, poll: FAST_POLL });
  });
  after(async () => {
    await client.close();
    await engine.dispose();
  });
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => fsp.rm(dir, { recursive: true, force: true }));

  it('uploads a file from a path with progress, waits for it and downloads it into a folder', async () => {
    const input = join(dir, 'episode.wav');
    await fsp.writeFile(input, wav);
    const progress: [number, number | undefined][] = [];
    const media = await client.uploadMedia(
      { file: input, media_enhancement: { loudness_target: -16, true_peak: -1 } },
      { onProgress: (done, total) => progress.push([done, total]) },
    );
    assert.equal(typeof media.uid, 'string');
    assert.equal(media.file_name, 'episode.wav');
    const last = progress[progress.length - 1];
    assert.ok(last[0] > wav.length && last[0] === last[1], `upload progress ended at ${last.join(',')}`);

    const states: string[] = [];
    const done = await client.waitForCompletion(media.uid, {
      timeoutMs: COMPLETES_WITHIN_MS,
      onStatus: (s) => states.push(s),
    });
    assert.equal(done.enhancement_status, 'COMPLETED');
    assert.equal(states[states.length - 1], 'COMPLETED');

    const out = join(dir, 'out');
    await fsp.mkdir(out);
    const file = await client.downloadToFile(media.uid, out);
    assert.equal(file.path, join(out, 'episode_enhanced.wav'));
    assert.equal(file.contentType, 'audio/wav');
    assert.equal((await fsp.stat(file.path)).size, file.size);
    assert.deepEqual(await fsp.readdir(out), ['episode_enhanced.wav']);
  });

  it('keeps a UTF-8 file name through upload, metadata, download and the written file', async () => {
    for (const name of [
      'Épisode 13 – final (v2).WAV',
      '会議の録音 第3回.wav',
      '🎙️ podcast 🎧.wav',
      "Ångström's (take 2).wav",
    ]) {
      const input = join(dir, name);
      await fsp.writeFile(input, wav);
      const media = await client.uploadMedia({ file: input, media_enhancement: FAST });
      assert.equal(media.file_name, name, 'the upload answer');
      assert.equal((await client.getMetadata(media.uid)).file_name, name, 'the metadata');
      await client.waitForCompletion(media.uid, { timeoutMs: COMPLETES_WITHIN_MS });
      const out = join(dir, `out-${media.uid}`);
      await fsp.mkdir(out);
      const enhanced = await client.downloadToFile(media.uid, out);
      const original = await client.downloadToFile(media.uid, out, { step: 'PRE' });
      const stem = name.slice(0, name.lastIndexOf('.'));
      assert.deepEqual((await fsp.readdir(out)).sort(), [name, `${stem}_enhanced.wav`].sort());
      assert.equal(enhanced.path, join(out, `${stem}_enhanced.wav`));
      assert.equal(original.path, join(out, name));
    }
  });

  it('names a download after the media when its file name is only spaces or dots', async () => {
    for (const name of ['   ', '...']) {
      const media = await client.uploadMedia({ file: wav, fileName: name, media_enhancement: FAST });
      await client.waitForCompletion(media.uid, { timeoutMs: COMPLETES_WITHIN_MS });
      const out = join(dir, `out-${media.uid}`);
      await fsp.mkdir(out);
      const file = await client.downloadToFile(media.uid, out);
      assert.equal(file.path, join(out, 'media_enhanced.wav'), `uploaded as ${JSON.stringify(name)}`);
      assert.deepEqual(await fsp.readdir(out), ['media_enhanced.wav']);
    }
  });

  it('uploads from a Buffer and from a stream, and downloads the original with step PRE', async () => {
    const fromBuffer = await client.uploadMedia({ file: wav, fileName: 'buffer.wav', media_enhancement: FAST });
    const input = join(dir, 'stream.wav');
    await fsp.writeFile(input, wav);
    const fromStream = await client.uploadMedia({ file: createReadStream(input), media_enhancement: FAST });
    assert.equal(fromStream.file_name, 'stream.wav');
    await client.waitForCompletion(fromBuffer.uid, { timeoutMs: COMPLETES_WITHIN_MS });
    const pre = await client.downloadFile(fromBuffer.uid, { step: 'PRE' });
    const chunks: Buffer[] = [];
    for await (const chunk of pre.stream) chunks.push(chunk as Buffer);
    assert.ok(Buffer.concat(chunks).equals(wav), 'PRE is the file as uploaded');
    assert.equal(pre.fileName, 'buffer.wav');
    assert.equal(pre.size, wav.length);
  });

  it('enhances audio from a URL (v1) and follows the generated name as a media', async () => {
    const source = await serveFile(wav);
    try {
      const result = await client.enhanceAudio({
        file_download_url: source.url,
        file_name: 'speech.wav',
        loudness_target_level: -16,
        loudness_peak_limit: -1,
        enhancement_level: 1,
        transcode_kind: null,
        model_arch: 'LARK_V2',
      });
      const done = await client.waitForCompletion(result.generated_name, { timeoutMs: COMPLETES_WITHIN_MS });
      assert.equal(done.enhancement_status, 'COMPLETED');
      const target = join(dir, 'named.wav');
      const file = await client.downloadToFile(result.generated_name, target);
      assert.equal(file.path, target);
      assert.ok(file.size > 44);
    } finally {
      await source.close();
    }
  });

  it('enhances a video (v1 multipart) and returns the video record', async () => {
    const record = await client.enhanceVideo({
      file: makeMp4(),
      fileName: 'clip.mp4',
      video_enhancement: { enhancement_model: 'LARK' },
    });
    assert.equal(record.file_name, 'clip.mp4');
    assert.equal(typeof record.inserted_at, 'string');
    assert.equal(record.enhancement_model, 'LARK');
    // LARK runs DeepFilterNet3: a fresh engine thread loads the network first (seconds on a busy machine).
    const done = await client.waitForCompletion(record.uid, { timeoutMs: 60_000 });
    assert.equal(done.enhancement_status, 'COMPLETED');
  });

  it("reads a media's metadata", async () => {
    const media = await client.uploadMedia({ file: wav, fileName: 'meta.wav' });
    const metadata = await client.getMetadata(media.uid);
    assert.equal(metadata.uid, media.uid);
    assert.ok(['PENDING', 'PROCESSING', 'COMPLETED'].includes(metadata.enhancement_status));
  });
});

describe('client errors: each answer of the service becomes one code', function () {
  let engine: TestEngine;
  let dir: string;
  const wav = makeWav(0.5, 16_000);
  const errors: unknown[] = [];

  const catchError = async (promise: Promise<unknown>): Promise<MediaEnhanceError> => {
    const err = await promise.then(
      () => assert.fail('expected an error'),
      (e: unknown) => e,
    );
    errors.push(err);
    assert.ok(err instanceof MediaEnhanceError, `not a MediaEnhanceError: ${String(err)}`);
    return err;
  };

  before(async () => {
    engine = await startTestEngine({ maxUploadBytes: 64 * 1024, processingDelayMs: 60_000 });
    dir = await tempDir();
  });
  after(async () => {
    await engine.dispose();
    await fsp.rm(dir, { recursive: true, force: true });
    // Whatever went wrong, no error told the key.
    for (const err of errors) {
      const e = err as MediaEnhanceError;
      assert.ok(
        !`${e.message} ${e.stack} ${e.details.join(' ')}`.includes(engine.apiKey),
        `the key leaked in: ${e.message}`,
      );
    }
  });

  const client = (options: Partial<ConstructorParameters<typeof MediaEnhanceClient>[0]> = {}) =>
    new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey, poll: FAST_POLL, ...options });

  it('401 for a wrong key is AUTH, and the wrong key is not in the message', async () => {
    const wrong = client({ apiKey: 'wrong-key-123456' });
    const err = await catchError(wrong.getMetadata('anything'));
    assert.equal(err.code, 'AUTH');
    assert.equal(err.status, 401);
    assert.ok(!err.message.includes('wrong-key-123456'));
    await wrong.close();
  });

  it('404 for an unknown media is NOT_FOUND, for metadata, download and wait alike', async () => {
    const c = client();
    assert.equal((await catchError(c.getMetadata('no-such-media'))).code, 'NOT_FOUND');
    assert.equal((await catchError(c.downloadToFile('no-such-media', join(dir, 'x.wav')))).code, 'NOT_FOUND');
    const err = await catchError(c.waitForCompletion('no-such-media', { timeoutMs: 60_000 }));
    assert.equal(err.code, 'NOT_FOUND');
    assert.equal(err.mediaUid, 'no-such-media');
    await c.close();
  });

  it('412 for a file asked before completion is NOT_READY', async () => {
    const c = client();
    const media = await c.uploadMedia({ file: wav, fileName: 'slow.wav' });
    const err = await catchError(c.downloadToFile(media.uid, join(dir, 'early.wav')));
    assert.equal(err.code, 'NOT_READY');
    assert.equal(err.status, 412);
    assert.deepEqual(await fsp.readdir(dir), [], 'no file is left behind');
    await c.close();
  });

  it('413 for a body over the size limit is TOO_LARGE', async () => {
    const c = client();
    const err = await catchError(c.uploadMedia({ file: makeWav(3, 48_000), fileName: 'big.wav' }));
    assert.equal(err.code, 'TOO_LARGE');
    assert.equal(err.status, 413);
    await c.close();
  });

  it('an early 413 or 401 for a large file sent from disk still reaches the client (not a broken pipe)', async () => {
    // 30 MB from a path: the client is still sending when the service answers, so the answer must
    // survive the service closing a connection the client had not finished writing.
    const big = join(dir, 'large.wav');
    await fsp.writeFile(big, Buffer.alloc(30 * 1024 * 1024, 7));
    for (let i = 0; i < 3; i++) {
      const tooLarge = await catchError(client().uploadMedia({ file: big }));
      assert.equal(tooLarge.code, 'TOO_LARGE', tooLarge.message);
      const wrongKey = await catchError(client({ apiKey: 'wrong-key-123456' }).uploadMedia({ file: big }));
      assert.equal(wrongKey.code, 'AUTH', wrongKey.message);
    }
    await fsp.rm(big);
  });

  it('415 for a file that is not media is UNSUPPORTED', async () => {
    const c = client();
    const err = await catchError(
      c.uploadMedia({ file: Buffer.from('just some text, not audio at all'), fileName: 'notes.txt' }),
    );
    assert.equal(err.code, 'UNSUPPORTED');
    assert.equal(err.status, 415);
    await c.close();
  });

  it('a 422 detail array from the service becomes readable field lines', async () => {
    // The client never sends an invalid request, so ask the service directly for its 422.
    const res = await fetch(`${engine.url}/v2/medias/x/file?step=FOO`, { headers: { 'x-api-key': engine.apiKey } });
    assert.equal(res.status, 422);
    const { errorFromResponse } = await import('../../src/client/errors');
    const err = errorFromResponse('GET /v2/medias/x/file', 422, await res.text());
    assert.equal(err.code, 'VALIDATION');
    assert.match(err.details[0], /^query\.step: /);
  });

  it('a refused connection is NETWORK once the service has been unreachable for `unreachableForMs`', async () => {
    const closed = await startTestEngine();
    const url = closed.url;
    await closed.dispose();
    const c = new MediaEnhanceClient({
      baseUrl: url,
      apiKey: 'k',
      retry: { maxRetries: 2, baseDelayMs: 10, unreachableForMs: 300 },
    });
    const waits: string[] = [];
    const started = Date.now();
    const err = await catchError(c.getMetadata('a', { onWait: (e) => waits.push(e.reason) }));
    assert.equal(err.code, 'NETWORK');
    assert.match(err.message, /ECONNREFUSED/);
    assert.ok(Date.now() - started >= 300, 'tried for the whole budget');
    assert.ok(
      waits.length > 2 && waits.every((w) => w === 'retry'),
      `${waits.length} retries: more than maxRetries while unreachable`,
    );
    await c.close();
  });

  it('an upload sent while the service restarts is made once it is back, and accepted once', async () => {
    const dataDir = await tempDir();
    const { startEngine } = await import('../../src/engine');
    const first = await startEngine({ apiKeys: ['restart-key-1234'], dataDir, onErrorLine: () => undefined });
    const port = Number(new URL(first.url).port);
    await first.close();
    const c = new MediaEnhanceClient({ baseUrl: first.url, apiKey: 'restart-key-1234', retry: { baseDelayMs: 200 } });
    const waits: string[] = [];
    const pending = c.uploadMedia(
      { file: wav, fileName: 'during-restart.wav' },
      { onWait: (e) => waits.push(String(e.cause)) },
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // down for 3 s, as a restart is
    let accepted = 0;
    const again = await startEngine({
      apiKeys: ['restart-key-1234'],
      dataDir,
      port,
      onErrorLine: () => undefined,
      onRequest: (e) => void (e.status === 201 && accepted++),
    });
    try {
      const media = await pending;
      assert.equal(media.file_name, 'during-restart.wav');
      assert.ok(waits.length >= 2 && waits.every((cause) => cause === 'ECONNREFUSED'), waits.join(', '));
      assert.equal(accepted, 1);
    } finally {
      await c.close();
      await again.close();
      await fsp.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('aborting is ABORTED', async () => {
    const c = client();
    const controller = new AbortController();
    const pending = c.getMetadata('a', { signal: controller.signal });
    controller.abort();
    assert.equal((await catchError(pending)).code, 'ABORTED');
    await c.close();
  });

  it('aborting an upload from a path closes the file it was reading', async () => {
    // A service that takes the request and never reads the body: the upload stalls mid-file.
    const stalled = createServer((req) => req.pause());
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    const dir = await fsp.mkdtemp(join(tmpdir(), 'me-abort-'));
    const path = join(dir, 'big.wav');
    await fsp.writeFile(path, Buffer.alloc(32 * 1024 * 1024));
    const openFiles = async () => (await fsp.readdir('/proc/self/fd')).length;
    const c = new MediaEnhanceClient({
      baseUrl: `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`,
      apiKey: 'k',
    });
    try {
      const before = await openFiles();
      const controller = new AbortController();
      const pending = c.uploadMedia({ file: path }, { signal: controller.signal });
      await new Promise((r) => setTimeout(r, 300));
      controller.abort();
      assert.equal((await catchError(pending)).code, 'ABORTED');
      await c.close();
      stalled.closeAllConnections();
      await new Promise((r) => setTimeout(r, 200));
      assert.ok((await openFiles()) <= before, 'no file descriptor left open');
    } finally {
      stalled.close();
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });

  it("a failed media is JOB_FAILED with the service's reason", async () => {
    const failing = await startTestEngine({ faults: { failProcessingRate: 1 } });
    const c = new MediaEnhanceClient({ baseUrl: failing.url, apiKey: failing.apiKey, poll: FAST_POLL });
    try {
      const media = await c.uploadMedia({ file: wav, fileName: 'doomed.wav' });
      const err = await catchError(c.waitForCompletion(media.uid, { timeoutMs: COMPLETES_WITHIN_MS }));
      assert.equal(err.code, 'JOB_FAILED');
      assert.equal(err.mediaUid, media.uid);
      assert.ok(err.message.length > 30, err.message);
    } finally {
      await c.close();
      await failing.dispose();
    }
  });

  it('a wait past its timeout is TIMEOUT', async () => {
    const c = client();
    const media = await c.uploadMedia({ file: wav, fileName: 'slow.wav' });
    const err = await catchError(c.waitForCompletion(media.uid, { timeoutMs: 400 }));
    assert.equal(err.code, 'TIMEOUT');
    assert.match(err.message, /still (PENDING|PROCESSING)/);
    await c.close();
  });

  it('a 500 that persists is HTTP after the bounded retries', async () => {
    const broken = await startTestEngine({ faults: { error500Rate: 1 } });
    const c = new MediaEnhanceClient({
      baseUrl: broken.url,
      apiKey: broken.apiKey,
      retry: { maxRetries: 2, baseDelayMs: 10 },
    });
    try {
      const err = await catchError(c.getMetadata('a'));
      assert.equal(err.code, 'HTTP');
      assert.equal(err.status, 500);
      assert.equal(broken.requests().length, 3);
    } finally {
      await c.close();
      await broken.dispose();
    }
  });

  it('a POST is not retried on a 500 (it may have been applied), but is on a 503', async () => {
    const broken = await startTestEngine({ faults: { error500Rate: 1 } });
    const c = new MediaEnhanceClient({
      baseUrl: broken.url,
      apiKey: broken.apiKey,
      retry: { maxRetries: 2, baseDelayMs: 10 },
    });
    const busy = await startTestEngine({ faults: { error503Rate: 1 } });
    const c2 = new MediaEnhanceClient({
      baseUrl: busy.url,
      apiKey: busy.apiKey,
      retry: { maxRetries: 2, baseDelayMs: 10 },
    });
    try {
      assert.equal((await catchError(c.uploadMedia({ file: wav, fileName: 'a.wav' }))).status, 500);
      assert.equal(broken.requests().length, 1);
      assert.equal((await catchError(c2.uploadMedia({ file: wav, fileName: 'a.wav' }))).status, 503);
      assert.equal(busy.requests().length, 3);
    } finally {
      await Promise.all([c.close(), c2.close(), broken.dispose(), busy.dispose()]);
    }
  });

  it('a connection cut while an answer is read: a GET is retried, a lost POST answer says the media may exist', async () => {
    // Half of all answers are cut halfway through their body (a seeded sequence, so the run is repeatable).
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const unlimited = { uploadMedia: null, getMetadata: null };
    const flaky = await startTestEngine({ faults: { resetRate: 0.5, random }, limits: unlimited });
    const c = new MediaEnhanceClient({
      baseUrl: flaky.url,
      apiKey: flaky.apiKey,
      limits: unlimited,
      retry: { maxRetries: 10, baseDelayMs: 2 },
    });
    try {
      // Uploads until one answer is lost: the service accepted it, the client never learned its uid.
      let uid: string | undefined;
      let cutOff: MediaEnhanceError | undefined;
      for (let i = 0; i < 20 && !(uid && cutOff); i++) {
        try {
          uid = (await c.uploadMedia({ file: wav, fileName: `take-${i}.wav` })).uid;
        } catch (err) {
          cutOff = err as MediaEnhanceError;
        }
      }
      assert.ok(uid && cutOff, 'the run met both a whole and a cut answer');
      assert.equal(cutOff.code, 'NETWORK');
      assert.match(
        cutOff.message,
        /connection broke while the answer was read .*may have accepted the media.*POST \/v2\/medias/,
      );
      const uploads = flaky.requests().filter((r) => r.method === 'POST');
      assert.ok(
        uploads.every((r) => r.status === 201),
        'each upload was sent once and accepted',
      );

      const before = flaky.requests().length;
      for (let i = 0; i < 100; i++) assert.equal((await c.getMetadata(uid)).uid, uid);
      const reads = flaky.requests().length - before;
      assert.ok(reads > 130, `only ${reads} requests for 100 reads: the cuts did not happen`);
    } finally {
      await c.close();
      await flaky.dispose();
    }
  });

  it('507 (the service is out of storage) is a service fault: an upload is sent again after it, not refused as invalid', async () => {
    let answered = 0;
    const full = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        answered++;
        const body =
          answered < 3
            ? { detail: 'the service has no room for this upload now' }
            : { uid: 'stored-1', file_name: 'a.wav' };
        res.writeHead(answered < 3 ? 507 : 201, { 'content-type': 'application/json', 'retry-after': '0' });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => full.listen(0, '127.0.0.1', resolve));
    const c = new MediaEnhanceClient({
      baseUrl: `http://127.0.0.1:${(full.address() as AddressInfo).port}`,
      apiKey: 'k-1234567890',
      retry: { maxRetries: 1, baseDelayMs: 5 },
    });
    try {
      const err = await catchError(c.uploadMedia({ file: wav, fileName: 'a.wav' }));
      assert.equal(err.code, 'HTTP');
      assert.equal(err.status, 507);
      assert.equal(err.retryable, true);
      assert.match(err.message, /no room for this upload/);
      assert.equal(answered, 2, 'sent again once after the first 507');
      assert.equal((await c.uploadMedia({ file: wav, fileName: 'a.wav' })).uid, 'stored-1');
    } finally {
      await c.close();
      await closeServer(full);
    }
  });

  it('a one-shot stream is not sent twice, and the error says why', async () => {
    const busy = await startTestEngine({ faults: { error503Rate: 1 } });
    const c = new MediaEnhanceClient({
      baseUrl: busy.url,
      apiKey: busy.apiKey,
      retry: { maxRetries: 2, baseDelayMs: 10 },
    });
    try {
      const input = join(dir, 'once.wav');
      await fsp.writeFile(input, wav);
      const err = await catchError(c.uploadMedia({ file: createReadStream(input) }));
      assert.equal(err.status, 503);
      assert.match(err.message, /one-shot stream/);
      assert.equal(busy.requests().length, 1);
    } finally {
      await c.close();
      await busy.dispose();
    }
  });
});
