// Media files on S3 (`--storage s3://...`), against a real S3 server: Ceph's radosgw on loopback, started
// once for this file. Each behaviour of the storage is shown end to end, through the engine's HTTP interface.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { EngineOptions } from '../../src/engine';
import { encodeWav, speechLike } from '../fixtures/audio';
import { probe } from '../fixtures/ffmpeg';
import { makeWav } from '../fixtures/media';
import { radosgwSuite } from '../fixtures/radosgw-suite';
import { call, KEY, settled, startTestEngine, upload, type TestEngine } from '../engine/helpers';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  localConfig,
  nextInput,
  stopHelper,
  TAB,
} from '../nodes/flow-helper';

const COPY_PROCESSOR = join(__dirname, '..', '..', 'src', 'engine', 'processors', 'copy-processor.js');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('engine: media files on S3 (radosgw)', function () {
  this.timeout(120_000);
  const rgw = radosgwSuite();
  let bucketNumber = 0;

  afterEach(async () => {
    for (const engine of rgw.engines.splice(0)) await engine.dispose();
  });

  /** An engine whose media files go to a bucket of its own (made by the engine) under `prefix`. */
  async function engineOnS3(
    options: Partial<EngineOptions> = {},
    prefix = 'media/',
  ): Promise<TestEngine & { bucket: string; prefix: string }> {
    const bucket = `media-enhance-test-${++bucketNumber}`;
    const engine = await startTestEngine({
      storage: `s3://${bucket}/${prefix}`,
      s3: { endpoint: rgw.gateway!.endpoint, forcePathStyle: true },
      workers: 1,
      ...options,
    });
    rgw.engines.push(engine);
    return Object.assign(engine, { bucket, prefix });
  }

  async function objects(bucket: string, prefix = ''): Promise<Array<{ key: string; size: number }>> {
    const page = await rgw.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    return (page.Contents ?? []).map((o) => ({ key: o.Key!, size: o.Size! }));
  }

  async function filesUnder(folder: string): Promise<string[]> {
    const entries = await fsp.readdir(folder, { recursive: true, withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name).slice(folder.length + 1));
  }

  const download = (engine: TestEngine, uid: string, step: 'PRE' | 'ENHANCED', headers: Record<string, string> = {}) =>
    call(`${engine.url}/v2/medias/${uid}/file?step=${step}`, { headers: { 'x-api-key': KEY, ...headers } });

  it('makes its bucket when it is missing', async () => {
    const bucket = `media-enhance-test-${bucketNumber + 1}`;
    await assert.rejects(rgw.s3.send(new HeadBucketCommand({ Bucket: bucket })), { name: 'NotFound' });
    await engineOnS3();
    await rgw.s3.send(new HeadBucketCommand({ Bucket: bucket })); // there now
  });

  it('keeps the original and the enhanced file on S3: the original comes back byte for byte, the enhanced whole, with its loudness report', async () => {
    const engine = await engineOnS3();
    const original = encodeWav({ sampleRate: 48_000, channels: 1, bits: 16 }, speechLike(48_000, 1, 3)(48_000 * 3));
    const accepted = await upload(engine, original, 'talk.wav');
    assert.equal(accepted.status, 201, accepted.text);
    const uid = accepted.json.uid;
    const done = await settled(engine, uid, 90_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done));

    const pre = await download(engine, uid, 'PRE');
    assert.equal(pre.status, 200);
    assert.equal(sha256(pre.bytes), sha256(original));

    const stored = await objects(engine.bucket, `${engine.prefix}${uid}/`);
    assert.deepEqual(stored.map((o) => o.key.slice(engine.prefix.length + uid.length + 1)).sort(), [
      'input',
      'loudness.json',
      'output',
    ]);
    const enhanced = await download(engine, uid, 'ENHANCED');
    assert.equal(enhanced.status, 200);
    assert.equal(Number(enhanced.headers['content-length']), enhanced.bytes.length);
    assert.equal(enhanced.bytes.length, stored.find((o) => o.key.endsWith('/output'))!.size);
    const path = join(await fsp.mkdtemp(join(tmpdir(), 'me-s3-test-')), 'enhanced.wav');
    await fsp.writeFile(path, enhanced.bytes);
    const probed = await probe(path);
    await fsp.rm(path, { force: true });
    assert.ok(Math.abs(Number(probed.format.duration) - 3) < 0.05, `duration ${probed.format.duration}`);

    const report = await call(`${engine.url}/v2/medias/${uid}/loudness`, { headers: { 'x-api-key': KEY } });
    assert.equal(report.status, 200, report.text);
    assert.equal(report.json.uid, uid);

    // Nothing but records is left in the data folder: the files are on S3, the work files are gone.
    const left = await filesUnder(engine.dataDir);
    assert.deepEqual(
      left.filter((name) => !name.endsWith('meta.json') && name !== 'api-key'),
      [],
      `files left in the data folder: ${left.join(', ')}`,
    );
    assert.equal((await objects(engine.bucket)).length, 3, 'the bucket holds the three objects of the media alone');
  });

  it('stores every extra output (several-outputs) in the bucket before COMPLETED and serves each by its step', async () => {
    const engine = await engineOnS3();
    const original = encodeWav({ sampleRate: 48_000, channels: 1, bits: 16 }, speechLike(48_000, 1, 4)(48_000 * 3));
    const accepted = await upload(engine, original, 'talk.wav', {
      media_enhancement: JSON.stringify({
        enhancement_model: 'FINCH',
        outputs: [{ name: 'feed', transcode: 'MP3', bitrate_kbps: 64 }, { name: 'master' }],
      }),
    });
    assert.equal(accepted.status, 201, accepted.text);
    const uid = accepted.json.uid;
    const done = await settled(engine, uid, 90_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done));
    const stored = await objects(engine.bucket, `${engine.prefix}${uid}/`);
    const size = (name: string) => stored.find((o) => o.key === `${engine.prefix}${uid}/${name}`)?.size;
    assert.deepEqual(stored.map((o) => o.key.slice(engine.prefix.length + uid.length + 1)).sort(), [
      'input',
      'loudness.json',
      'output',
      'output-feed',
      'output-master',
    ]);
    const feed = await call(`${engine.url}/v2/medias/${uid}/file?step=feed`, { headers: { 'x-api-key': KEY } });
    assert.equal(feed.status, 200, feed.text);
    assert.equal(feed.headers['content-type'], 'audio/mpeg');
    assert.equal(feed.bytes.length, size('output-feed'));
    const master = await call(`${engine.url}/v2/medias/${uid}/file?step=master`, {
      headers: { 'x-api-key': KEY, range: 'bytes=0-11' },
    });
    assert.equal(master.status, 206);
    assert.equal(master.bytes.subarray(8, 12).toString('latin1'), 'WAVE');
    assert.equal(master.headers['content-range'], `bytes 0-11/${size('output-master')}`);
    // Nothing of the outputs is left in the data folder: they went to the bucket.
    const left = await filesUnder(engine.dataDir);
    assert.deepEqual(
      left.filter((name) => !name.endsWith('meta.json') && name !== 'api-key'),
      [],
      `files left in the data folder: ${left.join(', ')}`,
    );
  });

  it('streams a file of several multipart parts in and out, and passes a Range request through (206)', async () => {
    const engine = await engineOnS3({ processorModule: COPY_PROCESSOR }, 'deep/prefix/');
    const original = makeWav(130, 48_000); // 12.5 MB: three parts of 5 MiB
    const accepted = await upload(engine, original, 'long.wav');
    assert.equal(accepted.status, 201, accepted.text);
    const uid = accepted.json.uid;
    // The 201 came once the object was complete.
    assert.deepEqual(await objects(engine.bucket, `${engine.prefix}${uid}/input`), [
      { key: `${engine.prefix}${uid}/input`, size: original.length },
    ]);
    assert.equal((await settled(engine, uid, 60_000)).enhancement_status, 'COMPLETED');

    const whole = await download(engine, uid, 'ENHANCED');
    assert.equal(sha256(whole.bytes), sha256(original)); // the copy processor's output: the original

    const part = await download(engine, uid, 'PRE', { range: 'bytes=6000000-6000999' });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 6000000-6000999/${original.length}`);
    assert.deepEqual(part.bytes, original.subarray(6_000_000, 6_001_000));

    const tail = await download(engine, uid, 'ENHANCED', { range: 'bytes=-100' });
    assert.equal(tail.status, 206);
    assert.equal(
      tail.headers['content-range'],
      `bytes ${original.length - 100}-${original.length - 1}/${original.length}`,
    );
    assert.deepEqual(tail.bytes, original.subarray(original.length - 100));

    const outside = await download(engine, uid, 'PRE', { range: `bytes=${original.length}-` });
    assert.equal(outside.status, 416);
  });

  it('deletes every object of a media it removes', async () => {
    const engine = await engineOnS3({ processorModule: COPY_PROCESSOR });
    const uids: string[] = [];
    for (const name of ['a.wav', 'b.wav']) {
      const accepted = await upload(engine, makeWav(0.5, 8_000), name);
      assert.equal(accepted.status, 201, accepted.text);
      uids.push(accepted.json.uid);
      await settled(engine, accepted.json.uid);
    }
    assert.equal((await objects(engine.bucket)).length, 4); // input and output of each
    const use = await engine.storage.use();
    assert.ok(use.bytes >= 2 * makeWav(0.5, 8_000).length * 2, `bytes used ${use.bytes}`);

    const removed = await engine.storage.removeFinished(new Set([uids[1]]));
    assert.equal(removed.removed, 1);
    assert.equal(removed.bytes, 2 * makeWav(0.5, 8_000).length);
    assert.deepEqual((await objects(engine.bucket)).map((o) => o.key).sort(), [
      `media/${uids[1]}/input`,
      `media/${uids[1]}/output`,
    ]);
    const gone = await call(`${engine.url}/v2/medias/${uids[0]}/metadata`, { headers: { 'x-api-key': KEY } });
    assert.equal(gone.status, 404);
  });

  it('answers uploads 503 with Retry-After while S3 is away, keeps nothing of them, and works again once it is back', async () => {
    const engine = await engineOnS3({ processorModule: COPY_PROCESSOR });
    const before = await upload(engine, makeWav(0.5, 8_000), 'before.wav');
    assert.equal(before.status, 201, before.text);
    await settled(engine, before.json.uid);

    await rgw.gateway!.stopGateway();
    try {
      for (const size of [0.5, 330]) {
        // A small file (one PUT at its end), and one of 32 MB: its first part fails while most of it is
        // still to come, more than the upload buffers, so the sender must be told, not left waiting.
        const refused = await upload(engine, makeWav(size, 48_000), 'away.wav');
        assert.equal(refused.status, 503, refused.text);
        assert.equal(refused.headers['retry-after'], '5');
        assert.match(refused.json.detail as string, /media storage .* does not answer/);
      }
      const download = await call(`${engine.url}/v2/medias/${before.json.uid}/file?step=PRE`, {
        headers: { 'x-api-key': KEY },
      });
      assert.equal(download.status, 503);
      // What a health check sees.
      await assert.rejects(engine.storage.ping(), /media storage .* does not answer/);
    } finally {
      await rgw.gateway!.startGateway();
    }
    // Nothing of the refused uploads was kept, here or there; the engine recovered by itself.
    assert.deepEqual(
      (await filesUnder(engine.dataDir)).filter((name) => !name.endsWith('meta.json') && name !== 'api-key'),
      [],
    );
    await engine.storage.ping();
    const after = await upload(engine, makeWav(0.5, 8_000), 'after.wav');
    assert.equal(after.status, 201, after.text);
    assert.equal((await settled(engine, after.json.uid)).enhancement_status, 'COMPLETED');
    const keys = (await objects(engine.bucket)).map((o) => o.key);
    assert.equal(keys.length, 4, keys.join(', ')); // before and after: input and output each
  });

  it('keeps a job whose storage goes away PROCESSING, and finishes it once S3 is back', async () => {
    const engine = await engineOnS3({ processorModule: COPY_PROCESSOR, processingDelayMs: 1_500 });
    const original = makeWav(1, 8_000);
    const accepted = await upload(engine, original, 'during.wav');
    assert.equal(accepted.status, 201, accepted.text);
    const uid = accepted.json.uid;
    const status = async () =>
      (await call(`${engine.url}/v2/medias/${uid}/metadata`, { headers: { 'x-api-key': KEY } })).json
        .enhancement_status;
    // Its input is loaded: S3 goes away while it is processed.
    while ((await status()) === 'PENDING') await new Promise((resolve) => setTimeout(resolve, 20));
    await rgw.gateway!.stopGateway();
    try {
      // The job cannot store its output (and, tried again, cannot load its input) while S3 is away.
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      assert.equal(await status(), 'PROCESSING');
      // Its metadata says why it stands still, and tells no time left (not a frozen "87 %, 0 s left").
      const { progress } = (await call(`${engine.url}/v2/medias/${uid}/metadata`, { headers: { 'x-api-key': KEY } }))
        .json as unknown as { progress?: { seconds_left: number | null; waiting?: string } };
      assert.match(progress?.waiting ?? '', /does not answer.*tried again every 5 s/, JSON.stringify(progress));
      assert.equal(progress?.seconds_left, null);
      assert.ok(
        engine.errorLines.some((line) => line.includes(uid) && /does not answer.*trying again/.test(line)),
        engine.errorLines.join('\n'),
      );
    } finally {
      await rgw.gateway!.startGateway();
    }
    assert.equal((await settled(engine, uid, 30_000)).enhancement_status, 'COMPLETED');
    assert.equal(sha256((await download(engine, uid, 'ENHANCED')).bytes), sha256(original));
  });

  it('resumes after a restart from the stored input, removing the work files a killed run left', async () => {
    const first = await engineOnS3({ processorModule: COPY_PROCESSOR, processingDelayMs: 60_000 });
    const original = makeWav(1, 8_000);
    const accepted = await upload(first, original, 'restart.wav');
    assert.equal(accepted.status, 201, accepted.text);
    const uid = accepted.json.uid;
    await first.close(); // the media stays PROCESSING in its record
    rgw.engines.splice(rgw.engines.indexOf(first), 1);
    // What a killed run leaves: a work copy of the input, and a half-made output.
    const work = join(first.dataDir, 'work', uid);
    await fsp.mkdir(work, { recursive: true });
    await fsp.writeFile(join(work, 'input'), original);
    await fsp.writeFile(join(work, 'output.encoded'), 'half');
    // And one of a media whose job will not run here again (another engine finished it).
    const stale = join(first.dataDir, 'work', randomUUID());
    await fsp.mkdir(stale);
    await fsp.writeFile(join(stale, 'input'), original);

    const second = await startTestEngine(
      {
        storage: `s3://${first.bucket}/${first.prefix}`,
        s3: { endpoint: rgw.gateway!.endpoint, forcePathStyle: true },
        processorModule: COPY_PROCESSOR,
      },
      first.dataDir,
    );
    rgw.engines.push(second);
    assert.equal((await settled(second, uid, 30_000)).enhancement_status, 'COMPLETED');
    assert.equal(sha256((await download(second, uid, 'ENHANCED')).bytes), sha256(original));
    assert.deepEqual(await fsp.readdir(join(first.dataDir, 'work')), [], 'no work files left');
  });

  describe('through Node-RED: a config node whose settings.js puts the media on S3', () => {
    before(async () => {
      await initHelper({
        storage: 's3://node-red-media/flows',
        s3: { endpoint: rgw.gateway!.endpoint, forcePathStyle: true },
        processorModule: COPY_PROCESSOR,
      });
    });
    after(stopHelper);
    afterEach(() => helper.unload());

    it('upload, wait and download run unchanged, the files in the bucket', async () => {
      await loadFlow([
        TAB,
        localConfig(),
        { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['wait']] },
        { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', timeout: '60', wires: [['download']] },
        {
          id: 'download',
          type: 'media-enhance-download',
          z: 'tab',
          service: 'svc',
          step: 'ENHANCED',
          output: 'buffer',
          wires: [['downloaded']],
        },
        { id: 'downloaded', type: 'helper', z: 'tab' },
        ...catchAll(),
      ]);
      const errors = collect(helper.getNode('caught'));
      const downloaded = nextInput(helper.getNode('downloaded'), 60_000);
      const original = makeWav(1, 8_000);
      helper.getNode('upload').receive({ payload: original, filename: 'flow.wav' });
      const message = await downloaded;
      assert.equal(errors.length, 0, JSON.stringify(errors.map((e) => e.error)));
      assert.equal(sha256(message.payload as Buffer), sha256(original)); // the copying processor's output
      const keys = (await objects('node-red-media', 'flows/')).map((o) => o.key.replace(/^flows\/[^/]+\//, ''));
      assert.deepEqual(keys.sort(), ['input', 'output']);
    });
  });
});
