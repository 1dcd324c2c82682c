// A data folder on a disk that fills up mid-job (a small tmpfs; mounting one needs root, so without it
// these tests skip, saying so): a job never ends COMPLETED with a file cut short, and a moment of full
// disk never fails an accepted media; it waits, says why, and goes on once there is room (or after a restart).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyWavChunks } from '../../src/audio/wav-chunks';
import { WavWriter } from '../../src/audio/wav-writer';
import { flacBomb, makeWav } from '../fixtures/media';
import { detailText } from './answers';
import { call, KEY, metadata, settled, startTestEngine, upload, type TestEngine } from './helpers';

const TMPFS_BYTES = 64 << 20;

/** A 16-bit mono WAV of `seconds` of tone with a LIST/INFO chunk of `listBytes` after its samples. */
function wavWithList(seconds: number, listBytes: number): { wav: Buffer; list: Buffer } {
  const plain = makeWav(seconds, 48_000);
  const comment = Buffer.alloc(listBytes - 12, 'a'.charCodeAt(0));
  const list = Buffer.alloc(8 + listBytes);
  list.write('LIST', 0, 'latin1');
  list.writeUInt32LE(listBytes, 4);
  list.write('INFO', 8, 'latin1');
  list.write('ICMT', 12, 'latin1');
  list.writeUInt32LE(comment.length, 16);
  comment.copy(list, 20);
  const wav = Buffer.concat([plain, list]);
  wav.writeUInt32LE(wav.length - 8, 4);
  return { wav, list };
}

function settings(model: string): Record<string, string> {
  return { media_enhancement: JSON.stringify({ loudness_target: -16, true_peak: -1, enhancement_model: model }) };
}

/** Bytes free on the file system of `dir`. */
async function freeBytes(dir: string): Promise<number> {
  const stats = await fsp.statfs(dir);
  return stats.bavail * stats.bsize;
}

/** Takes all but `leftBytes` of the free room with a file; resolves to its path. */
async function fillUpTo(dir: string, leftBytes: number): Promise<string> {
  const path = join(dir, 'filler');
  const size = Math.max(0, (await freeBytes(dir)) - leftBytes);
  const handle = await fsp.open(path, 'w');
  try {
    const block = Buffer.alloc(1 << 20);
    for (let written = 0; written < size; written += block.length)
      await handle.write(block, 0, Math.min(block.length, size - written));
  } finally {
    await handle.close();
  }
  return path;
}

/** Polls until the media's progress says it waits (and never ended meanwhile). */
async function waitingReason(engine: TestEngine, uid: string, timeoutMs = 30_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { json } = await metadata(engine, uid);
    const progress = (json as unknown as { progress?: { waiting?: string; seconds_left: number | null } }).progress;
    assert.equal(
      json.enhancement_status,
      'PROCESSING',
      `a full disk ends nothing: ${json.enhancement_status} ${JSON.stringify(json.error ?? '')}`,
    );
    if (progress?.waiting) {
      assert.equal(progress.seconds_left, null, 'no time left is told while the work stands still');
      return progress.waiting;
    }
    if (Date.now() > end)
      throw new Error(`media ${uid} never said it waits: ${JSON.stringify(json)} ${engine.errorLines.join(' | ')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a full disk under the data folder (tmpfs)', function () {
  this.timeout(180_000);
  let mountDir: string;
  let dataDir: string;
  let engine: TestEngine | undefined;

  before(async function () {
    if (process.getuid?.() !== 0) {
      console.log('      skipped: mounting a small tmpfs as a full disk needs root');
      this.skip();
    }
    mountDir = await fsp.mkdtemp(join(tmpdir(), 'me-full-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_BYTES},mode=700`, 'tmpfs', mountDir]);
  });

  beforeEach(async () => {
    dataDir = join(mountDir, 'data');
    await fsp.mkdir(dataDir);
  });

  afterEach(async () => {
    await engine?.close();
    engine = undefined;
    for (const name of await fsp.readdir(mountDir))
      await fsp.rm(join(mountDir, name), { recursive: true, force: true });
  });

  after(() => {
    if (!mountDir) return;
    execFileSync('umount', [mountDir]);
    return fsp.rm(mountDir, { recursive: true, force: true });
  });

  it('a short write (the disk full part way) throws ENOSPC; the file never silently ends early', async () => {
    const inputDir = await fsp.mkdtemp(join(tmpdir(), 'me-full-disk-input-'));
    try {
      const input = join(inputDir, 'tags.wav');
      await fsp.writeFile(input, wavWithList(1, 4 << 20).wav);
      const output = join(dataDir, 'out.wav');
      await fsp.writeFile(output, makeWav(1, 48_000));
      await fillUpTo(mountDir, 1 << 20);
      await assert.rejects(copyWavChunks(input, output), { code: 'ENOSPC' });
      await fsp.rm(output); // the room it took back
      const format = {
        sampleRate: 48_000,
        channels: 1,
        bitsPerSample: 16,
        encoding: 'int',
        channelMask: 0,
        blockAlign: 2,
      } as const;
      const writer = await WavWriter.create(join(dataDir, 'written.wav'), format);
      const frames = 48_000 * 20; // 1.9 MB where 1 MB is left
      await assert.rejects(writer.write([new Float32Array(frames).fill(0.25)], frames, false), { code: 'ENOSPC' });
      await writer.abort();
    } finally {
      await fsp.rm(inputDir, { recursive: true, force: true });
    }
  });

  it('an upload that decodes to more than the data folder has free is refused 507 with Retry-After, nothing kept', async () => {
    engine = await startTestEngine({ workers: 1 }, dataDir);
    const bomb = flacBomb(); // 16 KB that decode to 117 MiB, where 64 MiB is all there is
    const sent = await upload(engine, bomb, 'bomb.flac', settings('LOUDNESS_ONLY'));
    assert.equal(sent.status, 507, sent.text);
    assert.ok(Number(sent.headers['retry-after']) > 0, 'it says when to try again');
    assert.match(
      detailText(sent.json),
      /decodes to 117\.2 MiB, its output takes 0\.0 MiB, and the service has [\d.]+ MiB free/,
    );
    const left = await fsp.readdir(join(dataDir, 'media'));
    assert.deepEqual(
      left.filter((name) => name !== '.incoming'),
      [],
      'no media was made',
    );
    assert.deepEqual(await fsp.readdir(join(dataDir, 'media', '.incoming')), [], 'the upload was removed');
  });

  it('counts the output itself in the room an upload needs: refused 507 when it does not fit beside the decoded audio', async () => {
    engine = await startTestEngine({ workers: 1 }, dataDir);
    const wav = makeWav(60, 48_000); // 5.5 MiB, read as it is: its output in its own format is 5.5 MiB too
    // About 7.5 MiB free once the upload is on the disk: room for its audio, not for its output too.
    await fillUpTo(dataDir, 13 << 20);
    const body = (extra: object) => ({
      media_enhancement: JSON.stringify({ enhancement_model: 'LOUDNESS_ONLY', ...extra }),
    });
    const refused = await upload(engine, wav, 'talk.wav', body({}));
    assert.equal(refused.status, 507, refused.text);
    assert.match(
      detailText(refused.json),
      /decodes to 5\.5 MiB, its output takes 5\.5 MiB, and the service has [\d.]+ MiB free/,
    );
    assert.deepEqual(await fsp.readdir(join(dataDir, 'media', '.incoming')), [], 'the upload was removed');
    // As an MP3 at 64 kb/s its output takes 0.5 MiB: the same file fits.
    const accepted = await upload(engine, wav, 'talk.wav', body({ transcode: 'MP3', bitrate_kbps: 64 }));
    assert.equal(accepted.status, 201, `the same file as a small MP3 fits: ${accepted.text}`);
  });

  it('counts the further outputs in the room an upload needs: refused 507 when they do not fit, though its audio and output would', async () => {
    engine = await startTestEngine({ workers: 1 }, dataDir);
    const wav = makeWav(60, 48_000); // 5.5 MiB, read as it is; its output 5.5 MiB
    const outputs = [
      { name: 'master', transcode: 'WAV' }, // the WAV's own format: 5.5 MiB
      { name: 'feed', transcode: 'MP3', bitrate_kbps: 320 }, // 60 s at 320 kb/s: 2.3 MiB
    ];
    // About 15 MiB free once the upload is on the disk: room for its audio and output, not for its outputs too.
    await fillUpTo(dataDir, 20.5 * (1 << 20));
    const body = (extra: object) => ({
      media_enhancement: JSON.stringify({ enhancement_model: 'LOUDNESS_ONLY', ...extra }),
    });
    const refused = await upload(engine, wav, 'talk.wav', body({ outputs }));
    assert.equal(refused.status, 507, refused.text);
    assert.match(
      detailText(refused.json),
      /decodes to 5\.5 MiB, its output takes 5\.5 MiB, its 2 further outputs 7\.8 MiB, and the service has [\d.]+ MiB free/,
    );
    assert.deepEqual(await fsp.readdir(join(dataDir, 'media', '.incoming')), [], 'the upload was removed');
    const accepted = await upload(engine, wav, 'talk.wav', body({}));
    assert.equal(accepted.status, 201, `the same file without outputs fits: ${accepted.text}`);
  });

  it('never COMPLETES with an output shorter than its header: it waits for room, then delivers it whole', async () => {
    // 60 s of tone (5.8 MB) and a 14 MiB LIST chunk: the output needs both; the disk has room for the samples only.
    // (Accepted on the empty disk: 44.5 MiB free once stored, for its 19.5 MiB read as it is and its output as large.)
    const { wav, list } = wavWithList(60, 14 * 1024 * 1024);
    engine = await startTestEngine({ processingDelayMs: 1500, workers: 1 }, dataDir);
    const sent = await upload(engine, wav, 'long-tags.wav', settings('LOUDNESS_ONLY'));
    assert.equal(sent.status, 201, sent.text);
    const uid = sent.json.uid;
    const filler = await fillUpTo(mountDir, 10 << 20); // during the processing delay
    const why = await waitingReason(engine, uid);
    assert.match(why, /disk is full/);
    assert.doesNotMatch(why, new RegExp(mountDir), 'the reason names no folder of the engine');
    await fsp.rm(filler);
    const done = await settled(engine, uid, 60_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    const out = (await call(`${engine.url}/v2/medias/${uid}/file`, { headers: { 'x-api-key': KEY } })).bytes;
    assert.equal(out.readUInt32LE(4) + 8, out.length, 'the output holds what its RIFF header declares');
    assert.ok(out.subarray(out.length - list.length).equals(list), 'the LIST chunk came over whole');
  });

  it('a moment of full disk mid-enhancement leaves the media PROCESSING; it completes after a restart', async () => {
    const wav = makeWav(20, 48_000);
    engine = await startTestEngine({ processingDelayMs: 1500, workers: 1 }, dataDir);
    const sent = await upload(engine, wav, 'talk.wav', settings('FINCH'));
    assert.equal(sent.status, 201, sent.text);
    const uid = sent.json.uid;
    const filler = await fillUpTo(mountDir, 1 << 20);
    assert.match(await waitingReason(engine, uid), /disk is full/);
    // Stopped while it waits: the media is still PROCESSING on disk, and the next start resumes it.
    await engine.close();
    await fsp.rm(filler);
    engine = await startTestEngine({ workers: 1 }, dataDir);
    const done = await settled(engine, uid, 60_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
  });
});
