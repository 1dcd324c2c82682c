// The README's "Several machines" as it is meant to run: engine processes on one Redis and one S3 bucket
// (a real radosgw), each with a data folder of its own. Uploads spread over three instances are followed,
// downloaded and reported on others; a machine dies mid-job and another finishes its work; an instance
// started later on an empty data folder serves every media; S3 away is a 503, not a loss.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import Redis from 'ioredis';
import { CHANGES_CHANNEL } from '../../src/engine/cluster/redis-records';
import { makeWav } from '../fixtures/media';
import { radosgwMissing, startTestRadosgw, type TestRadosgw } from '../fixtures/radosgw-server';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import {
  EngineCluster,
  followToEnd,
  getBytes,
  getJson,
  secondsOf,
  sha256,
  tempFolder,
  uploadWav,
  type ClusterStorage,
} from './engine-cluster';
import { servesEvery, uploadsSpreadOverThree, type KeptMedia } from './one-service-checks';

/** Every instance on one bucket, each with its own (at first empty) data folder for work files. */
function s3Bucket(gateway: TestRadosgw, bucket: string, dataRoot: string): ClusterStorage {
  return {
    args: (instance) => [
      '--data-dir',
      join(dataRoot, `instance-${instance}`),
      '--storage',
      `s3://${bucket}/media/`,
      '--s3-endpoint',
      gateway.endpoint,
      '--s3-force-path-style',
    ],
    env: gateway.env,
  };
}

const secondsUploaded = (wav: Buffer) => (wav.length - 44) / 2 / 48_000;

describe('cluster: instances on one Redis and one S3 bucket (radosgw)', function () {
  this.timeout(180_000);
  let gateway: TestRadosgw | undefined;

  before(async function () {
    const missing = radosgwMissing();
    if (missing) {
      console.log(`      skipped: ${missing}`);
      this.skip();
    }
    gateway = await startTestRadosgw();
  });

  after(async () => {
    await gateway?.stop();
  });

  describe('answer as one service', function () {
    let redis: TestRedis;
    let cluster: EngineCluster;
    let data: ReturnType<typeof tempFolder>;
    const media: KeptMedia[] = [];

    before(async () => {
      data = tempFolder('cluster-s3-');
      // Persistence on, as the README asks of the queue's Redis: a restart keeps every write.
      redis = await startTestRedis({ persistDir: data.path });
      cluster = new EngineCluster({
        redisUrl: redis.url,
        storage: s3Bucket(gateway!, 'cluster-media', data.path),
        // Each job spends 2 s PROCESSING: long enough for a machine to die in the middle of it.
        args: [
          ...['--workers', '1', '--processing-delay-ms', '2000', '--job-lock-ms', '2000'],
          ...['--limit-upload', '100', '--limit-metadata', '100000', '--limit-download', '1000'],
        ],
      });
      for (let i = 0; i < 3; i++) await cluster.add();
    });

    after(async () => {
      await cluster?.stop();
      await redis?.stop();
      data?.remove();
    });

    it('takes uploads on every instance, ends each on another and serves it whole from a third', async () => {
      media.push(
        ...(await uploadsSpreadOverThree(
          cluster.instances.map((i) => i.url),
          data.path,
        )),
      );
      // The data folders hold no media: not a file is left of the finished jobs.
      for (let i = 0; i < 3; i++) {
        const folder = join(data.path, `instance-${i}`);
        const files = readdirSync(folder, { recursive: true, withFileTypes: true }).filter((e) => !e.isDirectory());
        assert.deepEqual(
          files.map((e) => join(e.parentPath, e.name)),
          [],
          `instance ${i} keeps no file of its media`,
        );
      }
    });

    it('a machine killed mid-job: another instance finishes its work, every media once', async () => {
      const [doomed, ...others] = cluster.instances;
      const listener = new Redis(redis.url);
      const told: string[] = [];
      listener.on('message', (_channel: string, message: string) => told.push(message));
      await listener.subscribe(CHANGES_CHANNEL);
      const originals = [1, 1.1, 1.2, 1.3, 1.4, 1.5].map((s) => makeWav(s, 48_000));
      // Twice the instances' workers: when three are PROCESSING, the doomed instance holds one of them.
      const uploads = await Promise.all(originals.map((wav, i) => uploadWav(cluster.instances[i % 3].url, wav)));
      const uids = uploads.map((u) => {
        assert.equal(u.status, 201, JSON.stringify(u.body));
        return u.body.uid as string;
      });
      const deadline = Date.now() + 20_000;
      const states = () => Promise.all(uids.map((uid) => getJson(`${others[0].url}/v2/medias/${uid}/metadata`)));
      while ((await states()).filter((s) => s.body.enhancement_status === 'PROCESSING').length < 3) {
        assert.ok(Date.now() < deadline, 'three media did not start');
        await new Promise((r) => setTimeout(r, 100));
      }
      await doomed.kill9();
      for (const [i, uid] of uids.entries()) {
        const ended = await followToEnd(
          others.map((o) => o.url),
          uid,
        );
        assert.equal(ended.enhancement_status, 'COMPLETED', JSON.stringify(ended));
        const pre = await getBytes(`${others[1].url}/v2/medias/${uid}/file?step=PRE`);
        assert.equal(sha256(pre.body), sha256(originals[i]));
        const enhanced = await getBytes(`${others[0].url}/v2/medias/${uid}/file`);
        assert.ok(Math.abs((await secondsOf(enhanced.body, data.path)) - secondsUploaded(originals[i])) < 0.01);
        media.push({ uid, original: originals[i], enhancedSha: sha256(enhanced.body) });
      }
      await new Promise((r) => setTimeout(r, 300)); // the last messages on their way
      listener.disconnect();
      for (const uid of uids)
        assert.equal(told.filter((m) => m === `${uid} COMPLETED`).length, 1, `media ${uid} COMPLETED once`);
    });

    it('an instance started later on an empty data folder serves every media', async () => {
      assert.equal(media.length, 12);
      await servesEvery((await cluster.add()).url, media);
    });

    it('S3 away: /healthz and uploads answer 503 with Retry-After, and both recover by themselves', async () => {
      const url = cluster.instances[cluster.instances.length - 1].url;
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      await gateway!.stopGateway();
      try {
        const health = await fetch(`${url}/healthz`);
        assert.equal(health.status, 503);
        assert.ok(health.headers.get('retry-after'));
        const upload = await uploadWav(url, makeWav(0.5, 48_000));
        assert.equal(upload.status, 503, JSON.stringify(upload.body));
        assert.ok(upload.headers.get('retry-after'));
      } finally {
        await gateway!.startGateway();
      }
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      const upload = await uploadWav(url, makeWav(0.5, 48_000));
      assert.equal(upload.status, 201, JSON.stringify(upload.body));
      const ended = await followToEnd([cluster.instances[1].url], upload.body.uid as string);
      assert.equal(ended.enhancement_status, 'COMPLETED');
    });

    it('Redis killed and started again: 503 with Retry-After while it is away, nothing accepted is lost', async () => {
      // The first instance was killed above: the others, the late one included.
      const urls = cluster.instances.slice(1).map((i) => i.url);
      const accepted = new Map<string, Buffer>();
      for (const [i, url] of urls.entries()) {
        const wav = makeWav(1 + i / 10, 48_000);
        const answer = await uploadWav(url, wav);
        assert.equal(answer.status, 201, JSON.stringify(answer.body));
        accepted.set(answer.body.uid as string, wav);
      }
      await redis.kill(); // mid-job: the media are PENDING or PROCESSING
      for (const url of urls) {
        const refused = await uploadWav(url, makeWav(0.5, 48_000));
        assert.equal(refused.status, 503, JSON.stringify(refused.body));
        assert.equal(refused.headers.get('retry-after'), '5');
        assert.equal((await fetch(`${url}/healthz`)).status, 503);
      }
      await redis.start();
      const deadline = Date.now() + 20_000;
      for (const url of urls)
        while ((await fetch(`${url}/healthz`)).status !== 200) {
          assert.ok(Date.now() < deadline, `${url} did not recover`);
          await new Promise((r) => setTimeout(r, 200));
        }
      for (const [uid, original] of accepted) {
        assert.equal((await followToEnd(urls, uid)).enhancement_status, 'COMPLETED');
        assert.equal(sha256((await getBytes(`${urls[2]}/v2/medias/${uid}/file?step=PRE`)).body), sha256(original));
      }
    });
  });

  describe('retention', function () {
    let redis: TestRedis;
    let cluster: EngineCluster;
    let data: ReturnType<typeof tempFolder>;

    before(async () => {
      redis = await startTestRedis();
      data = tempFolder('cluster-s3-retention-');
      cluster = new EngineCluster({
        redisUrl: redis.url,
        storage: s3Bucket(gateway!, 'cluster-retention', data.path),
        // Finished media go 2 s after their last use; every instance checks every 0.3 s.
        args: [
          '--workers',
          '1',
          '--keep-hours',
          String(2 / 3600),
          '--keep-grace-min',
          '0',
          '--sweep-every-min',
          '0.005',
        ],
      });
      await cluster.add();
      await cluster.add();
    });

    after(async () => {
      await cluster?.stop();
      await redis?.stop();
      data?.remove();
    });

    it('removes each finished media once, from Redis and from the bucket', async () => {
      const urls = cluster.instances.map((i) => i.url);
      const uploads = await Promise.all([0, 1, 2].map((i) => uploadWav(urls[i % 2], makeWav(0.5, 16_000))));
      const uids = uploads.map((u) => u.body.uid as string);
      for (const uid of uids) assert.equal((await followToEnd(urls, uid)).enhancement_status, 'COMPLETED');
      const s3 = new S3Client({
        endpoint: gateway!.endpoint,
        region: gateway!.env.AWS_REGION,
        forcePathStyle: true,
        credentials: {
          accessKeyId: gateway!.env.AWS_ACCESS_KEY_ID,
          secretAccessKey: gateway!.env.AWS_SECRET_ACCESS_KEY,
        },
      });
      const objects = async () =>
        (await s3.send(new ListObjectsV2Command({ Bucket: 'cluster-retention', Prefix: 'media/' }))).KeyCount ?? 0;
      try {
        // Watched in the bucket, not asked for over HTTP: a status request is a use, which keeps a media longer.
        const deadline = Date.now() + 20_000;
        while ((await objects()) > 0) {
          assert.ok(Date.now() < deadline, 'the media were not removed from the bucket');
          await new Promise((r) => setTimeout(r, 200));
        }
      } finally {
        s3.destroy();
      }
      for (const uid of uids)
        for (const url of urls) assert.equal((await getJson(`${url}/v2/medias/${uid}/metadata`)).status, 404);
      await new Promise((r) => setTimeout(r, 1000)); // further sweeps find nothing more to remove
      const told = cluster.instances.map((i) => i.output()).join('');
      for (const uid of uids)
        assert.equal(
          told.split(`removed media ${uid}`).length - 1,
          1,
          `media ${uid} was removed once, by one instance`,
        );
    });
  });
});
