// An upload whose acceptance fails after its input was kept: the record made, then its job not started (the
// shared queue away), or the record never written (a full disk). The upload route undoes in order, the
// record first, so a record never points at nothing: the input stays while a record may point at it, and
// goes as soon as none does. The route runs on a real HTTP server with the real storages (S3 on Ceph's
// radosgw, and the data folder); only the job queue and the records' writes fail, as they do when away.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Faults } from '../../src/engine/faults';
import { upload, type RouteContext } from '../../src/engine/http/routes';
import { DiskRecords } from '../../src/engine/storage/disk-records';
import { LocalMediaFiles } from '../../src/engine/storage/local-media-files';
import type { MediaFiles } from '../../src/engine/storage/media-files';
import type { MediaRecords } from '../../src/engine/storage/media-records';
import type { MediaRetention } from '../../src/engine/storage/retention';
import { S3MediaFiles } from '../../src/engine/storage/s3-media-files';
import { makeWav } from '../fixtures/media';
import { radosgwSuite } from '../fixtures/radosgw-suite';
import { call, multipart } from '../engine/helpers';

/** What fails in the records (each call rejects): `remove` as a shared state away does, `create` as a full disk does. */
type Failing = Partial<Record<'remove' | 'create', string>>;

describe('engine: an upload whose acceptance fails after its input was kept', function () {
  this.timeout(120_000);
  const rgw = radosgwSuite();
  let dir: string;
  let server: Server | undefined;
  let bucketNumber = 0;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'failed-acceptance-'));
  });
  afterEach(async () => {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** The upload route on loopback over `files`, its jobs never starting, its records failing as `failing` says. */
  async function route(files: MediaFiles, failing: Failing): Promise<{ url: string; records: DiskRecords }> {
    await files.open();
    const records = new DiskRecords(join(dir, 'media'), files);
    await records.open();
    const failingRecords = Object.assign(Object.create(records) as MediaRecords, {
      create: failing.create ? () => Promise.reject(new Error(failing.create)) : records.create.bind(records),
      remove: failing.remove ? () => Promise.reject(new Error(failing.remove)) : records.remove.bind(records),
    });
    const ctx: RouteContext = {
      files,
      records: failingRecords,
      metadataWaitS: 0,
      jobs: { start: () => Promise.reject(new Error('the shared queue did not answer')), close: async () => {} },
      faults: new Faults({}),
      retention: undefined as unknown as MediaRetention, // the upload route keeps none
      maxUploadBytes: 64 * 1024 ** 2,
    };
    server = createServer((req, res) => {
      upload(req, ctx, 'upload').then(
        (answer) => res.writeHead(answer.status).end(JSON.stringify(answer.body)),
        (err: Error) => res.writeHead(503).end(err.message),
      );
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return { url: `http://127.0.0.1:${port}/v2/medias`, records };
  }

  async function s3Files(): Promise<{ files: S3MediaFiles; bucket: string }> {
    const bucket = `media-enhance-acceptance-${++bucketNumber}`;
    await rgw.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const files = new S3MediaFiles(
      { bucket, prefix: 'media/' },
      { endpoint: rgw.gateway!.endpoint, region: 'us-east-1', forcePathStyle: true },
      dir,
    );
    return { files, bucket };
  }

  async function keys(bucket: string): Promise<string[]> {
    const page = await rgw.s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    return (page.Contents ?? []).map((o) => o.Key!);
  }

  const wav = makeWav(0.5, 16_000);
  const send = (url: string) => {
    const { body, headers } = multipart(wav, 'take.wav');
    return call(url, { method: 'POST', headers, body });
  };

  it('on S3, a job that does not start and a record that cannot be removed: the record keeps its input, byte for byte', async () => {
    const { files, bucket } = await s3Files();
    const { url, records } = await route(files, { remove: 'the shared state did not answer' });
    const answer = await send(url);
    assert.equal(answer.status, 503, answer.text);
    assert.match(answer.text, /the shared queue did not answer/);
    const [record] = await records.all();
    assert.equal(record?.enhancement_status, 'PENDING', 'the record stays, for the check of unqueued media');
    assert.deepEqual(await keys(bucket), [`media/${record.uid}/input`], 'its input is still in the bucket');
    const stored = await rgw.s3.send(new GetObjectCommand({ Bucket: bucket, Key: `media/${record.uid}/input` }));
    assert.ok(Buffer.from(await stored.Body!.transformToByteArray()).equals(wav), 'the input as it was sent');
    files.close();
  });

  it('on S3, a job that does not start and a record removed: nothing is left of the upload', async () => {
    const { files, bucket } = await s3Files();
    const { url, records } = await route(files, {});
    assert.equal((await send(url)).status, 503);
    assert.deepEqual(await records.all(), []);
    assert.deepEqual(await keys(bucket), []);
    files.close();
  });

  it('in the data folder, a record that could not be written: its kept input is removed at once, not at the next start', async () => {
    const files = new LocalMediaFiles(join(dir, 'media'));
    const { url, records } = await route(files, { create: 'ENOSPC: no space left on device, write' });
    const answer = await send(url);
    assert.equal(answer.status, 503);
    assert.match(answer.text, /ENOSPC/);
    assert.deepEqual(await records.all(), []);
    const left = (await readdir(join(dir, 'media'))).filter((name) => name !== '.incoming');
    assert.deepEqual(left, [], `the data folder holds ${left.join(', ')}`);
  });

  it('in the data folder, a crash between keeping an input and writing its record: the start removes it, with a log line', async () => {
    const files = new LocalMediaFiles(join(dir, 'media'));
    await files.open();
    const uid = new DiskRecords(join(dir, 'media'), files).newUid();
    await mkdir(join(dir, 'media', uid));
    await writeFile(join(dir, 'media', uid, 'input'), wav);
    const lines: string[] = [];
    await new DiskRecords(join(dir, 'media'), files, (line) => lines.push(line)).open();
    assert.deepEqual(await readdir(join(dir, 'media')), ['.incoming']);
    assert.deepEqual(lines, [`removed media folder ${uid}: an upload whose record was never written (no job owns it)`]);
  });
});
