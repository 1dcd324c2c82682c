import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { encodeWav, speechLike } from '../fixtures/audio';
import { makeMp4, makeWav } from '../fixtures/media';
import {
  AUDIO_BODY,
  call,
  KEY,
  metadata,
  multipart,
  settled,
  startTestEngine,
  upload,
  type TestEngine,
} from './helpers';
import { detailText, issues } from './answers';

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** A file server for enhance-json fetches: `routes` maps a path to a status, body and headers. */
async function fileServer(
  routes: Record<string, { status: number; body?: Buffer; headers?: Record<string, string> }>,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const route = routes[req.url ?? ''] ?? { status: 404 };
    res.writeHead(route.status, route.headers);
    res.end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('engine: operations and the status table of decisions.md', function () {
  let engine: TestEngine;
  let files: { url: string; server: Server };
  // Half a second of speech-like sound: the default model takes a steady tone for noise.
  const wav = encodeWav({ sampleRate: 16_000, channels: 1, bits: 16 }, speechLike(16_000, 1, 3, -20)(8_000));

  before(async () => {
    engine = await startTestEngine({ maxUploadBytes: 256 * 1024, limits: { uploadMedia: 1_000 } });
    const redirects: Record<string, { status: number; headers?: Record<string, string>; body?: Buffer }> = {};
    for (let i = 0; i < 7; i++) redirects[`/hop${i}`] = { status: 302, headers: { location: `/hop${i + 1}` } };
    redirects['/hop5'] = { status: 200, body: wav };
    files = await fileServer({
      '/speech.wav': { status: 200, body: wav },
      '/moved': { status: 301, headers: { location: '/speech.wav' } },
      '/gone': { status: 410 },
      '/notes.txt': { status: 200, body: Buffer.from('hello, not audio') },
      '/to-ftp': { status: 302, headers: { location: 'ftp://127.0.0.1/x.wav' } },
      '/too-many': { status: 302, headers: { location: '/hop0' } },
      ...redirects,
    });
  });
  after(async () => {
    await engine.dispose();
    files.server.closeAllConnections();
    files.server.close();
  });

  const enhanceJson = (body: unknown, headers: Record<string, string> = {}) =>
    call(`${engine.url}/v1/media/enhance-json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY, ...headers },
      body: JSON.stringify(body),
    });

  it('POST /v2/medias: 201 with the metadata object', async () => {
    const res = await upload(engine, wav, 'episode.wav', {
      media_enhancement: JSON.stringify({ loudness_target: -14, transcode: 'WAV' }),
    });
    assert.equal(res.status, 201);
    const m = res.json;
    assert.equal(typeof m.uid, 'string');
    assert.equal(m.file_name, 'episode.wav');
    assert.ok(['PENDING', 'PROCESSING', 'COMPLETED'].includes(m.enhancement_status));
    assert.match(m.inserted_at, ISO_UTC);
    assert.match(m.updated_at, ISO_UTC);
    assert.deepEqual(m.enhancement_params, {
      loudness_target: -14,
      true_peak: -1,
      enhancement_level: 100,
      enhancement_model: 'LARK_V2',
      transcode: 'WAV',
    });
    assert.equal(m.internal, undefined, 'nothing engine-only leaks');
  });

  it('GET metadata and file: 200, and the file of a completed media with its headers', async () => {
    const { json } = await upload(engine, wav, 'my talk.wav');
    const done = await settled(engine, json.uid);
    assert.equal(done.enhancement_status, 'COMPLETED');
    assert.equal(done.enhancement_params.processing, 'speech enhancement, loudness');
    assert.ok(Math.abs(done.enhancement_params.output_loudness_lufs! - -16) <= 0.5, 'normalized to the default target');
    const file = await call(`${engine.url}/v2/medias/${json.uid}/file`, { headers: { 'x-api-key': KEY } });
    assert.equal(file.status, 200);
    assert.equal(file.headers['content-type'], 'audio/wav');
    assert.equal(Number(file.headers['content-length']), file.bytes.length);
    assert.equal(file.bytes.toString('latin1', 0, 4), 'RIFF');
    assert.equal(file.headers['content-disposition'], 'attachment; filename="my talk_enhanced.wav"');
    const pre = await call(`${engine.url}/v2/medias/${json.uid}/file?step=PRE`, { headers: { 'x-api-key': KEY } });
    assert.equal(pre.headers['content-disposition'], 'attachment; filename="my talk.wav"');
    assert.ok(pre.bytes.equals(wav), 'PRE is the file as it was received');
  });

  it('serves byte ranges (206), so an interrupted download can resume, and 416 outside the file', async () => {
    const { json } = await upload(engine, wav, 'range.wav');
    await settled(engine, json.uid);
    const whole = (await call(`${engine.url}/v2/medias/${json.uid}/file`, { headers: { 'x-api-key': KEY } })).bytes;
    const part = await call(`${engine.url}/v2/medias/${json.uid}/file`, {
      headers: { 'x-api-key': KEY, range: 'bytes=100-' },
    });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 100-${whole.length - 1}/${whole.length}`);
    assert.ok(part.bytes.equals(whole.subarray(100)));
    const outside = await call(`${engine.url}/v2/medias/${json.uid}/file`, {
      headers: { 'x-api-key': KEY, range: `bytes=${whole.length}-` },
    });
    assert.equal(outside.status, 416);
  });

  it('POST /v1/videos: 201 with the video record', async () => {
    const res = await upload(
      engine,
      makeMp4(),
      'clip.mp4',
      { video_enhancement: JSON.stringify({ enhancement_level: 40, enhancement_model: 'FINCH' }) },
      '/v1/videos',
    );
    assert.equal(res.status, 201);
    for (const field of ['uid', 'inserted_at', 'updated_at', 'file_name', 'enhancement_status'])
      assert.equal(typeof res.json[field], 'string', field);
    assert.equal(res.json.enhancement_level, 40);
    assert.equal(res.json.enhancement_model, 'FINCH');
    assert.equal(typeof res.json.enhancement_params, 'object');
    const done = await settled(engine, res.json.uid);
    const file = await call(`${engine.url}/v2/medias/${done.uid}/file`, { headers: { 'x-api-key': KEY } });
    assert.equal(file.headers['content-type'], 'video/mp4');
    assert.equal(file.headers['content-disposition'], 'attachment; filename="clip_enhanced.mp4"');
  });

  it('POST /v1/media/enhance-json: 201 {generated_name}, a media uid; the file is fetched in the background, redirects followed', async () => {
    for (const path of ['/speech.wav', '/moved', '/hop0']) {
      const res = await enhanceJson({ ...AUDIO_BODY, file_download_url: `${files.url}${path}` });
      assert.equal(res.status, 201);
      assert.deepEqual(Object.keys(res.json), ['generated_name']);
      const done = await settled(engine, res.json.generated_name);
      assert.equal(done.enhancement_status, 'COMPLETED', `${path}: ${JSON.stringify(done.error)}`);
      assert.equal(done.file_name, 'talk.wav');
    }
  });

  for (const [path, reason] of [
    ['/gone', /HTTP 410/],
    ['/notes.txt', /not a recognised audio or video/],
    ['/to-ftp', /ftp:/],
    ['/too-many', /more than 5 redirects/],
  ] as const) {
    it(`enhance-json: a fetch of ${path} ends the media FAILED, saying why`, async () => {
      const res = await enhanceJson({ ...AUDIO_BODY, file_download_url: `${files.url}${path}` });
      assert.equal(res.status, 201);
      const done = await settled(engine, res.json.generated_name);
      assert.equal(done.enhancement_status, 'FAILED');
      assert.match(done.error!.message, reason);
      assert.equal(typeof done.error!.code, 'string');
    });
  }

  it('401 for a missing or wrong key, with {detail: string}', async () => {
    for (const headers of [{}, { 'x-api-key': 'nope' }] as Record<string, string>[]) {
      const res = await call(`${engine.url}/v2/medias/abc/metadata`, { headers });
      assert.equal(res.status, 401);
      assert.equal(typeof res.json.detail, 'string');
    }
  });

  it('404 for an unknown media, for metadata and file', async () => {
    assert.equal((await metadata(engine, 'no-such-media')).status, 404);
    const file = await call(`${engine.url}/v2/medias/no-such-media/file`, { headers: { 'x-api-key': KEY } });
    assert.equal(file.status, 404);
    assert.equal(typeof file.json.detail, 'string');
  });

  it('412 for the enhanced file before the media is COMPLETED', async () => {
    const slow = await startTestEngine({ processingDelayMs: 5_000 });
    try {
      const { json } = await upload(slow, wav, 'slow.wav');
      const res = await call(`${slow.url}/v2/medias/${json.uid}/file`, { headers: { 'x-api-key': KEY } });
      assert.equal(res.status, 412);
      assert.match(detailText(res.json), /PENDING|PROCESSING/);
    } finally {
      await slow.dispose();
    }
  });

  it('422 with a detail array listing every bad field of a JSON body', async () => {
    const res = await enhanceJson({
      ...AUDIO_BODY,
      file_download_url: 'ftp://x',
      loudness_target_level: 0,
      model_arch: 'X',
      transcode_kind: undefined,
    });
    assert.equal(res.status, 422);
    const locs = issues(res.json)
      .map((d) => d.loc.join('.'))
      .sort();
    assert.deepEqual(locs, [
      'body.file_download_url',
      'body.loudness_target_level',
      'body.model_arch',
      'body.transcode_kind',
    ]);
    for (const d of issues(res.json)) assert.ok(typeof d.msg === 'string' && typeof d.type === 'string');
  });

  it('422 for malformed JSON, a wrong Content-Type, a bad multipart part, a bad step, a multipart body without file', async () => {
    const badJson = await call(`${engine.url}/v1/media/enhance-json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: '{"file_name": ',
    });
    assert.equal(badJson.status, 422);
    assert.deepEqual(issues(badJson.json)[0].loc, ['body']);
    const wrongType = await enhanceJson(AUDIO_BODY, { 'content-type': 'text/plain' });
    assert.equal(wrongType.status, 422);
    const badPart = await upload(engine, wav, 'a.wav', {
      media_enhancement: JSON.stringify({ loudness_target: -80, bogus: 1 }),
    });
    assert.equal(badPart.status, 422);
    assert.deepEqual(
      issues(badPart.json)
        .map((d) => d.loc.join('.'))
        .sort(),
      ['body.media_enhancement.bogus', 'body.media_enhancement.loudness_target'],
    );
    const notJsonPart = await upload(engine, wav, 'a.wav', { media_enhancement: '{oops' });
    assert.equal(notJsonPart.status, 422);
    const badStep = await call(`${engine.url}/v2/medias/abc/file?step=FOO`, { headers: { 'x-api-key': KEY } });
    assert.equal(badStep.status, 422);
    assert.deepEqual(issues(badStep.json)[0].loc, ['query', 'step']);
    const { body, headers } = multipart(undefined, '', { media_enhancement: '{}' });
    const noFile = await call(`${engine.url}/v2/medias`, {
      method: 'POST',
      headers: { ...headers, 'x-api-key': KEY },
      body,
    });
    assert.equal(noFile.status, 422);
    assert.deepEqual(issues(noFile.json)[0].loc, ['body', 'file']);
    const garbage = await call(`${engine.url}/v2/medias`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz', 'x-api-key': KEY },
      body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF....WAVE', // never closed
    });
    assert.equal(garbage.status, 422);
  });

  it('413 for a body over the size limit, leaving no partial file', async () => {
    const res = await upload(engine, makeWav(10, 48_000), 'big.wav');
    assert.equal(res.status, 413);
    assert.equal(typeof res.json.detail, 'string');
    assert.deepEqual(await fsp.readdir(join(engine.dataDir, 'media', '.incoming')), []);
  });

  it('413 for a chunked body that passes the size limit before its file part, read no further', async () => {
    // No length declared: the engine must count what comes. The body is a preamble without end; the
    // client stops at 16 times the limit (4 MiB) if nothing has answered by then.
    const socket = connect(Number(new URL(engine.url).port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', () => undefined); // cut once its answer is out: what it received is what is looked at
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      `POST /v2/medias HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${KEY}\r\n` +
        'Content-Type: multipart/form-data; boundary=xyz\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    const piece = Buffer.alloc(16 * 1024, 'p');
    const chunk = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
    let sent = 0;
    while (answer === '' && !socket.destroyed && sent < 16 * 256 * 1024) {
      sent += piece.length;
      if (!socket.write(chunk)) await new Promise((resolve) => socket.once('drain', resolve));
    }
    if (!socket.destroyed) socket.end('0\r\n\r\n'); // the body ends: the engine has no more to drain
    await closed;
    assert.match(answer, /^HTTP\/1\.1 413 /, `answered after ${sent} bytes: ${answer.slice(0, 300)}`);
    // The body was counted, not a file: the answer says so (no file part ever came).
    assert.match(
      answer,
      /the request body is larger than the \d+ bytes this service accepts: a file of up to 262144 bytes/,
    );
    assert.deepEqual(await fsp.readdir(join(engine.dataDir, 'media', '.incoming')), []);
  });

  it('415 for a file that is not a recognised container, decided by its bytes, not its name', async () => {
    const res = await upload(engine, Buffer.from('plain text pretending to be audio'), 'fake.wav');
    assert.equal(res.status, 415);
    for (const [bytes, name] of [
      [Buffer.concat([Buffer.from('fLaC'), Buffer.alloc(64)]), 'x.bin'],
      [Buffer.concat([Buffer.from('OggS'), Buffer.alloc(64)]), 'x.bin'],
      [Buffer.concat([Buffer.from('ID3'), Buffer.alloc(64)]), 'x.bin'],
      [Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), Buffer.alloc(64)]), 'x.bin'],
      [Buffer.concat([Buffer.from('FORM\0\0\0\0AIFF'), Buffer.alloc(64)]), 'x.bin'],
    ] as const) {
      assert.equal(
        (await upload(engine, bytes, name)).status,
        201,
        `${bytes.subarray(0, 4).toString('latin1')} is media`,
      );
    }
  });

  it('treats a client file name as a label only: ../../ never chooses a path', async () => {
    const res = await upload(engine, wav, '../../escape.wav');
    assert.equal(res.status, 201);
    assert.equal(res.json.file_name, 'escape.wav', 'the label keeps the base name only');
    await settled(engine, res.json.uid);
    await assert.rejects(fsp.stat(join(engine.dataDir, '..', 'escape.wav')));
    await assert.rejects(fsp.stat(join(engine.dataDir, 'escape.wav')));
    const file = await call(`${engine.url}/v2/medias/${res.json.uid}/file`, { headers: { 'x-api-key': KEY } });
    assert.equal(file.headers['content-disposition'], 'attachment; filename="escape_enhanced.wav"');
  });

  it('logs one line per request, never with a key', async () => {
    await metadata(engine, 'logged');
    const line = engine.logLines.find((l) => l.includes('/v2/medias/logged/metadata'));
    assert.match(line ?? '', /GET \/v2\/medias\/logged\/metadata 404 [\d.]+ms$/);
    assert.ok(engine.logLines.every((l) => !l.includes(KEY)));
  });
});
