// What a crash leaves in the bucket: a multipart upload never completed, and an input object whose
// media was never put on record. The retention's sweep removes both once they are stale, and the bucket
// the engine makes has a rule that aborts unfinished multipart uploads by itself.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetBucketLifecycleConfigurationCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { makeWav } from '../fixtures/media';
import { radosgwSuite } from '../fixtures/radosgw-suite';
import { metadata, settled, startTestEngine, upload } from '../engine/helpers';

const DAY = 24 * 3600_000;

describe('engine: leftovers of a crash in the S3 bucket (radosgw)', function () {
  this.timeout(120_000);
  const rgw = radosgwSuite();

  it('aborts stale multipart uploads and removes input objects no media owns; keeps every media', async () => {
    const bucket = 'media-enhance-leftovers-1';
    await rgw.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    // A crash mid-upload: parts stored, never completed.
    const unfinished = `media/${randomUUID()}/input`;
    const { UploadId } = await rgw.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: unfinished }));
    await rgw.s3.send(
      new UploadPartCommand({ Bucket: bucket, Key: unfinished, UploadId, PartNumber: 1, Body: Buffer.alloc(1024) }),
    );
    // A crash between an upload's completion and its record.
    const orphan = `media/${randomUUID()}/input`;
    await rgw.s3.send(new PutObjectCommand({ Bucket: bucket, Key: orphan, Body: makeWav(0.2, 16_000) }));
    // Something of the bucket's owner beside the engine's prefix: never the engine's to remove.
    await rgw.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'notes.txt', Body: 'mine' }));
    // Two days on, for the engine: both leftovers are stale.
    const engine = await startTestEngine({
      storage: `s3://${bucket}/media/`,
      s3: { endpoint: rgw.gateway!.endpoint, forcePathStyle: true },
      workers: 1,
      clock: () => Date.now() + 2 * DAY,
      retention: { sweepIntervalMs: 300 },
    });
    rgw.engines.push(engine);
    const uid = String((await upload(engine, makeWav(0.5, 16_000), 'kept.wav')).json.uid);
    assert.equal((await settled(engine, uid, 60_000)).enhancement_status, 'COMPLETED');
    const deadline = Date.now() + 20_000;
    for (;;) {
      const uploads = (await rgw.s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
      const keys = await objectKeys(bucket);
      if (uploads.length === 0 && !keys.includes(orphan)) break;
      assert.ok(
        Date.now() < deadline,
        `leftovers stay: ${JSON.stringify(uploads.map((u) => u.Key))} ${JSON.stringify(keys)}; ${engine.errorLines.join('\n')}`,
      );
      await new Promise((r) => setTimeout(r, 300));
    }
    const keys = await objectKeys(bucket);
    assert.ok(keys.includes(`media/${uid}/input`) && keys.includes(`media/${uid}/output`), JSON.stringify(keys));
    assert.ok(keys.includes('notes.txt'));
    assert.equal((await metadata(engine, uid)).status, 200);
  });

  it('makes its bucket with a rule that aborts multipart uploads left unfinished for a day', async () => {
    const bucket = 'media-enhance-leftovers-2';
    const engine = await startTestEngine({
      storage: `s3://${bucket}/media/`,
      s3: { endpoint: rgw.gateway!.endpoint, forcePathStyle: true },
      workers: 1,
    });
    rgw.engines.push(engine);
    const rules = (await rgw.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).Rules ?? [];
    const rule = rules.find((r) => r.AbortIncompleteMultipartUpload?.DaysAfterInitiation !== undefined);
    assert.ok(rule, JSON.stringify(rules));
    assert.equal(rule.AbortIncompleteMultipartUpload!.DaysAfterInitiation, 1);
    assert.equal(rule.Status, 'Enabled');
  });

  async function objectKeys(bucket: string): Promise<string[]> {
    return ((await rgw.s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((o) => o.Key!);
  }
});
