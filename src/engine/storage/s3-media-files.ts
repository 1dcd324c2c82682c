// Media files in an S3 bucket (`--storage s3://<bucket>/<prefix>`): any S3-compatible service (AWS S3,
// Ceph RGW, Garage, SeaweedFS, R2...), so that every engine sharing the bucket serves every media. Objects
// are `<prefix><uid>/input`, `<prefix><uid>/output` (and `output-<name>` per extra output) and
// `<prefix><uid>/loudness.json`; an upload is
// streamed (a multipart upload) straight to the input of the uid its media will take: accepting it copies nothing.
// Processing needs local paths: a job works on copies under `<data-dir>/work/<uid>`, removed after it.
import { createReadStream, createWriteStream, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { insideRoot } from '../../contract/contained-path';
import type { LoudnessReport } from '../../contract/loudness-report';
import { bytesUnder } from './bytes-under';
import { PRIVATE_DIR, PRIVATE_FILE } from './local-media-files';
import {
  isMediaFile,
  namedOutputFile,
  StorageUnavailableError,
  type IncomingFile,
  type MediaFileName,
  type MediaFiles,
  type WorkFiles,
} from './media-files';
import { ENGINE_UID } from './media-uid';
import type { S3Location } from './s3-location';

export interface S3Options {
  /** The service's URL, e.g. `http://127.0.0.1:7480`; default: AWS S3 of `region`. */
  endpoint?: string;
  region: string;
  /** Bucket in the path (`host/bucket/key`), as most services other than AWS need. */
  forcePathStyle: boolean;
}

/**
 * Parts of a multipart upload: S3's smallest (5 MiB), and at most this many in flight, so an upload holds
 * about PART_BYTES * (PARTS_IN_FLIGHT + 1) in memory whatever its size.
 */
const PART_BYTES = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;
/** A storage that does not take a connection within this is away (its requests would hang otherwise). */
const CONNECT_TIMEOUT_MS = 5_000;
/** A request on which nothing moves for this long is cut. */
const IDLE_TIMEOUT_MS = 60_000;
const LOUDNESS_REPORT = 'loudness.json';
/**
 * A multipart upload started this long ago and never completed is a crashed one's (an honest upload of
 * the 2 GiB limit on a slow line takes hours, not a day); the bucket the engine makes aborts them too.
 */
const STALE_MULTIPART_DAYS = 1;
/**
 * Objects of a uid no media owns, untouched this long, are what a crash between an upload's completion
 * and its record left (that window is a moment; an hour leaves every upload under way its time).
 */
const STALE_UNOWNED_MS = 3600_000;

export class S3MediaFiles implements MediaFiles {
  private readonly s3: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly workRoot: string;
  private bucketReady?: Promise<void>;

  /** `dataDir`: where the work files of jobs go. */
  constructor(
    location: S3Location,
    private readonly options: S3Options,
    dataDir: string,
  ) {
    this.bucket = location.bucket;
    this.prefix = location.prefix;
    this.workRoot = join(dataDir, 'work');
    this.s3 = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle,
      // Checksums only where S3 requires them: many S3-compatible services refuse the newer defaults.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: IDLE_TIMEOUT_MS },
    });
  }

  async open(): Promise<void> {
    await fsp.mkdir(this.workRoot, { recursive: true, mode: PRIVATE_DIR });
    // Work files of jobs the last stop cut off: the job starts over from the stored input.
    for (const name of await fsp.readdir(this.workRoot))
      if (ENGINE_UID.test(name)) await fsp.rm(this.workFolder(name), { recursive: true, force: true });
    // A storage away at start is not fatal: uploads answer 503 until it answers, then the bucket is made.
    await this.ensureBucket().catch((err: unknown) => {
      if (!(err instanceof StorageUnavailableError)) throw err;
    });
  }

  close(): void {
    this.s3.destroy();
  }

  async ping(): Promise<void> {
    await this.call(() => this.s3.send(new HeadBucketCommand({ Bucket: this.bucket })));
  }

  receive(uid: string): IncomingFile {
    const key = this.keyOf(uid, 'input');
    const body = new PassThrough({ highWaterMark: PART_BYTES });
    const upload = new Upload({
      client: this.s3,
      params: { Bucket: this.bucket, Key: key, Body: body },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    let failure: unknown;
    const done = this.ensureBucket()
      .then(() => upload.done())
      .then(
        () => undefined,
        (err: unknown) => {
          failure = this.unavailable(err) ?? err;
          // The upload's sender would wait forever on a stream nobody reads: it fails with the cause.
          body.destroy(failure instanceof Error ? failure : new Error(String(failure)));
          throw failure;
        },
      );
    done.catch(() => undefined); // told through stored() or the stream
    return {
      uid,
      stream: body,
      failure: () => failure,
      stored: () => done,
      keep: () => Promise.resolve(), // received where the input goes: nothing to move
      discard: async () => {
        body.destroy();
        await upload.abort().catch(() => undefined);
        await done.catch(() => undefined);
        await this.deleteKey(key).catch(() => undefined);
      },
    };
  }

  prepare(): Promise<void> {
    return Promise.resolve(); // keys need no folder
  }

  async size(uid: string, file: MediaFileName): Promise<number> {
    const head = await this.call(() =>
      this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(uid, file) })),
    );
    return head.ContentLength ?? 0;
  }

  async read(uid: string, file: MediaFileName, start: number, end: number): Promise<Readable> {
    if (end < start) return Readable.from([]);
    const answer = await this.call(() =>
      this.s3.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(uid, file), Range: `bytes=${start}-${end}` }),
      ),
    );
    return answer.Body as Readable;
  }

  async work(uid: string): Promise<WorkFiles> {
    const folder = this.workFolder(uid);
    await fsp.rm(folder, { recursive: true, force: true });
    await fsp.mkdir(folder, { recursive: true, mode: PRIVATE_DIR });
    const inputPath = join(folder, 'input');
    const outputPath = join(folder, 'output');
    return {
      inputPath,
      outputPath,
      loadInput: async () => {
        const answer = await this.call(() =>
          this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(uid, 'input') })),
        );
        await this.call(() => pipeline(answer.Body as Readable, createWriteStream(inputPath, { mode: PRIVATE_FILE })));
      },
      saveInput: () => this.putFile(this.keyOf(uid, 'input'), inputPath),
      saveOutput: () => this.putFile(this.keyOf(uid, 'output'), outputPath),
      namedOutputPath: (name) => join(folder, namedOutputFile(name)),
      saveNamedOutput: (name) =>
        this.putFile(this.keyOf(uid, namedOutputFile(name)), join(folder, namedOutputFile(name))),
      close: () => fsp.rm(folder, { recursive: true, force: true }).catch(() => undefined),
    };
  }

  async saveLoudnessReport(uid: string, report: LoudnessReport): Promise<void> {
    // One PUT: S3 makes the object visible whole or not at all.
    await this.call(() =>
      this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.keyOf(uid, LOUDNESS_REPORT),
          Body: JSON.stringify(report),
          ContentType: 'application/json',
        }),
      ),
    );
  }

  async loudnessReportJson(uid: string): Promise<Buffer | undefined> {
    try {
      const answer = await this.call(() =>
        this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(uid, LOUDNESS_REPORT) })),
      );
      return Buffer.from(await answer.Body!.transformToByteArray());
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async remove(uid: string): Promise<void> {
    // One by one: DeleteObjects needs a checksum header that not every S3-compatible service takes.
    for (const object of await this.list(this.mediaPrefix(uid))) await this.deleteKey(object.key);
  }

  async fileBytes(uid: string): Promise<number> {
    const prefix = this.mediaPrefix(uid);
    const objects = await this.list(prefix);
    return objects.filter((o) => isMediaFile(o.key.slice(prefix.length))).reduce((sum, o) => sum + o.size, 0);
  }

  async allBytes(uid: string): Promise<number> {
    return (await this.list(this.mediaPrefix(uid))).reduce((sum, o) => sum + o.size, 0);
  }

  async bytesUsed(): Promise<number> {
    const stored = (await this.list(this.prefix)).reduce((sum, o) => sum + o.size, 0);
    return stored + (await bytesUnder(this.workRoot));
  }

  async sweepLeftovers(owned: (uid: string) => Promise<boolean>, now: number): Promise<string[]> {
    const removed: string[] = [];
    for (const upload of await this.multipartUploads()) {
      if (now - upload.initiated < STALE_MULTIPART_DAYS * 86_400_000) continue;
      await this.call(() =>
        this.s3.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.key, UploadId: upload.id })),
      ).catch((err: unknown) => {
        if (!isNotFound(err)) throw err; // aborted meanwhile (another instance, the bucket's rule): as good
      });
      removed.push(
        `an unfinished multipart upload of ${upload.key}, started ${new Date(upload.initiated).toISOString()}`,
      );
    }
    const byUid = new Map<string, Array<{ key: string; modified: number }>>();
    for (const object of await this.list(this.prefix)) {
      const uid = object.key.slice(this.prefix.length).split('/')[0];
      if (!ENGINE_UID.test(uid)) continue; // not a media's: never the engine's to remove
      let objects = byUid.get(uid);
      if (!objects) byUid.set(uid, (objects = []));
      objects.push(object);
    }
    for (const [uid, objects] of byUid) {
      if (now - Math.max(...objects.map((o) => o.modified)) < STALE_UNOWNED_MS) continue;
      if (await owned(uid)) continue;
      for (const object of objects) await this.deleteKey(object.key);
      removed.push(`${objects.length} object(s) of ${this.prefix}${uid}/, which no media owns`);
    }
    return removed;
  }

  /** The multipart uploads under the prefix that were started and neither completed nor aborted. */
  private async multipartUploads(): Promise<Array<{ key: string; id: string; initiated: number }>> {
    const uploads: Array<{ key: string; id: string; initiated: number }> = [];
    let keyMarker: string | undefined;
    let idMarker: string | undefined;
    for (;;) {
      const page = await this.call(() =>
        this.s3.send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: this.prefix,
            KeyMarker: keyMarker,
            UploadIdMarker: idMarker,
          }),
        ),
      );
      for (const u of page.Uploads ?? [])
        if (u.Key && u.UploadId) uploads.push({ key: u.Key, id: u.UploadId, initiated: u.Initiated?.getTime() ?? 0 });
      if (!page.IsTruncated) return uploads;
      keyMarker = page.NextKeyMarker;
      idMarker = page.NextUploadIdMarker;
    }
  }

  /** Where the objects of a media are; a uid is always the engine's own (a UUID), never a path. */
  private mediaPrefix(uid: string): string {
    if (!ENGINE_UID.test(uid)) throw new Error(`not a media uid: ${JSON.stringify(uid.slice(0, 100))}`);
    return `${this.prefix}${uid}/`;
  }

  private keyOf(uid: string, name: string): string {
    return `${this.mediaPrefix(uid)}${name}`;
  }

  private workFolder(uid: string): string {
    if (!ENGINE_UID.test(uid)) throw new Error(`not a media uid: ${JSON.stringify(uid.slice(0, 100))}`);
    return insideRoot(this.workRoot, join(this.workRoot, uid));
  }

  /** Streams a local file to `key` (multipart for a large one); the object appears only once complete. */
  private async putFile(key: string, path: string): Promise<void> {
    await this.call(() =>
      new Upload({
        client: this.s3,
        params: { Bucket: this.bucket, Key: key, Body: createReadStream(path) },
        partSize: PART_BYTES,
        queueSize: PARTS_IN_FLIGHT,
        leavePartsOnError: false,
      }).done(),
    );
  }

  private async deleteKey(key: string): Promise<void> {
    await this.call(() => this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
  }

  private async list(prefix: string): Promise<Array<{ key: string; size: number; modified: number }>> {
    const objects: Array<{ key: string; size: number; modified: number }> = [];
    let token: string | undefined;
    do {
      const page = await this.call(() =>
        this.s3.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token })),
      );
      for (const o of page.Contents ?? [])
        if (o.Key) objects.push({ key: o.Key, size: o.Size ?? 0, modified: o.LastModified?.getTime() ?? 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return objects;
  }

  /** Makes the bucket when it is missing; once done, never asked again (until it failed). */
  private ensureBucket(): Promise<void> {
    this.bucketReady ??= (async () => {
      try {
        await this.call(() => this.s3.send(new HeadBucketCommand({ Bucket: this.bucket })));
      } catch (err) {
        if (!isNotFound(err)) throw err;
        const made = await this.call(() => this.s3.send(new CreateBucketCommand({ Bucket: this.bucket }))).then(
          () => true,
          (created: unknown) => {
            // Another engine made it meanwhile: as good.
            if ((created as Error)?.name !== 'BucketAlreadyOwnedByYou') throw created;
            return false;
          },
        );
        if (made) await this.abortUnfinishedUploadsByRule();
      }
    })().catch((err: unknown) => {
      this.bucketReady = undefined;
      throw err;
    });
    return this.bucketReady;
  }

  /**
   * On a bucket the engine made: a lifecycle rule by which the service itself aborts multipart uploads
   * left unfinished for STALE_MULTIPART_DAYS. A service without lifecycle rules refuses it: the sweep
   * (sweepLeftovers) does the same work then.
   */
  private async abortUnfinishedUploadsByRule(): Promise<void> {
    await this.s3
      .send(
        new PutBucketLifecycleConfigurationCommand({
          Bucket: this.bucket,
          LifecycleConfiguration: {
            Rules: [
              {
                ID: 'media-enhance: abort unfinished multipart uploads',
                Status: 'Enabled',
                Filter: { Prefix: this.prefix },
                AbortIncompleteMultipartUpload: { DaysAfterInitiation: STALE_MULTIPART_DAYS },
              },
            ],
          },
        }),
      )
      .catch(() => undefined);
  }

  /** Runs a request; a storage that does not answer becomes a StorageUnavailableError. */
  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      throw this.unavailable(err) ?? err;
    }
  }

  private unavailable(err: unknown): StorageUnavailableError | undefined {
    if (err instanceof StorageUnavailableError) return err;
    const e = err as { code?: string; name?: string; $metadata?: { httpStatusCode?: number }; message?: string };
    const status = e?.$metadata?.httpStatusCode;
    const network =
      typeof e?.code === 'string' &&
      /^(ECONN|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)/.test(e.code);
    const timeout = e?.name === 'TimeoutError' || e?.name === 'RequestTimeout';
    if (!network && !timeout && !(status !== undefined && status >= 500)) return undefined;
    const where = this.options.endpoint ?? `AWS S3 (${this.options.region})`;
    const why = e.code ?? (status ? `HTTP ${status}` : (e.name ?? 'no answer'));
    return new StorageUnavailableError(`the media storage (${where}, bucket ${this.bucket}) does not answer: ${why}`);
  }
}

function isNotFound(err: unknown): boolean {
  const name = (err as Error)?.name;
  return (
    name === 'NotFound' ||
    name === 'NoSuchKey' ||
    name === 'NoSuchBucket' ||
    (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404)
  );
}
