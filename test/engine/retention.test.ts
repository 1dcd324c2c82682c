// The engine keeps finished media within its age and size limits, oldest first, and never removes a
// media still in progress or one asked for within the grace period.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RemovedMedia } from '../../src/engine';
import { makeWav } from '../fixtures/media';
import { call, KEY, metadata, settled, startTestEngine, upload, type TestEngine } from './helpers';

const wav = makeWav(0.2, 8_000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('engine: retention of finished media', function () {
  this.timeout(60_000);
  let engine: TestEngine | undefined;
  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
  });

  async function finishedMedia(name: string): Promise<string> {
    const res = await upload(engine!, wav, name);
    assert.equal(res.status, 201, res.text);
    assert.equal((await settled(engine!, res.json.uid)).enhancement_status, 'COMPLETED');
    return res.json.uid;
  }

  async function bytesOnDisk(uid: string): Promise<number> {
    const sizes = await Promise.all(
      ['input', 'output'].map((file) => fsp.stat(join(engine!.dataDir, 'media', uid, file)).then((s) => s.size)),
    );
    return sizes[0] + sizes[1];
  }

  it('removes the oldest finished media while all of them take more than the size limit, and says why', async () => {
    const removed: RemovedMedia[] = [];
    // Room for two media (each its input and its output, the same size for a WAV in and out).
    const budget = Math.round(2.5 * 2 * wav.length);
    engine = await startTestEngine({
      retention: { maxTotalBytes: budget, maxAgeMs: null, graceMs: 0 },
      onRemoved: (r) => removed.push(r),
    });
    const uids: string[] = [];
    for (let i = 0; i < 4; i++) {
      uids.push(await finishedMedia(`take ${i}.wav`));
      await sleep(50); // each sweep follows its job; this keeps their finishing times apart
    }
    await sleep(200);
    assert.deepEqual(
      removed.map((r) => r.record.uid),
      uids.slice(0, 2),
      'the two oldest went, in order',
    );
    for (const r of removed)
      assert.match(
        r.reason,
        /media took [\d.]+ MiB \(work files included\), more than the [\d.]+ MiB kept; this was the oldest finished/,
      );
    for (const uid of uids.slice(0, 2)) {
      assert.equal((await metadata(engine, uid)).status, 404);
      assert.equal(existsSync(join(engine.dataDir, 'media', uid)), false, 'its folder is gone');
    }
    let total = 0;
    for (const uid of uids.slice(2)) {
      assert.equal((await metadata(engine, uid)).status, 200);
      total += await bytesOnDisk(uid);
    }
    assert.ok(total <= budget, `${total} bytes kept, limit ${budget}`);
  });

  it('counts the work files of media in progress against the size limit (a decoded input takes room too)', async () => {
    const removed: RemovedMedia[] = [];
    engine = await startTestEngine({
      processingDelayMs: 1_500,
      retention: { maxTotalBytes: 4 * 2 * wav.length, maxAgeMs: null, graceMs: 0, sweepIntervalMs: 100 },
      onRemoved: (r) => removed.push(r),
    });
    const loudnessOnly = {
      media_enhancement: JSON.stringify({ loudness_target: -16, true_peak: -1, enhancement_model: 'LOUDNESS_ONLY' }),
    };
    const sent = await upload(engine, wav, 'done.wav', loudnessOnly);
    const first = sent.json.uid;
    assert.equal((await settled(engine, first, 60_000)).enhancement_status, 'COMPLETED');
    assert.equal(removed.length, 0, 'one finished media is within the limit');
    const busy = await upload(engine, wav, 'busy.wav', loudnessOnly);
    assert.equal(busy.status, 201, busy.text);
    // What a job of a compressed input writes beside it: its decoded audio, many times the input.
    await fsp.writeFile(
      join(engine.dataDir, 'media', busy.json.uid, 'output.decoded.wav'),
      Buffer.alloc(8 * wav.length),
    );
    for (let i = 0; i < 40 && removed.length === 0; i++) await sleep(50);
    assert.deepEqual(
      removed.map((r) => r.record.uid),
      [first],
      'the finished media made room for the work files',
    );
    assert.match(removed[0].reason, /\(work files included\)/);
  });

  it('never removes a media that is still processing, however far over the limits', async () => {
    engine = await startTestEngine({
      processingDelayMs: 2_000,
      retention: { maxTotalBytes: 1, maxAgeMs: 1, graceMs: 300, sweepIntervalMs: 50 },
    });
    // FINCH: the first DeepFilterNet3 job of a fresh thread spends seconds loading the network.
    const res = await upload(engine, wav, 'long job.wav', {
      media_enhancement: JSON.stringify({ loudness_target: -16, true_peak: -1, enhancement_model: 'FINCH' }),
    });
    // Nobody asks for it for longer than the grace period while it processes: only its state keeps it.
    await sleep(1_200);
    const during = await metadata(engine, res.json.uid);
    assert.equal(during.status, 200, 'still there while processing');
    assert.equal(during.json.enhancement_status, 'PROCESSING');
    assert.equal((await settled(engine, res.json.uid)).enhancement_status, 'COMPLETED');
  });

  it('keeps a finished media while it is asked for within the grace period, and removes it once left alone', async () => {
    engine = await startTestEngine({
      retention: { maxTotalBytes: 1, maxAgeMs: null, graceMs: 1_000, sweepIntervalMs: 50 },
    });
    const uid = await finishedMedia('followed.wav');
    // A wait that keeps asking, then the download it leads to: the media is there for both.
    for (let i = 0; i < 6; i++) {
      assert.equal((await metadata(engine, uid)).status, 200);
      await sleep(300);
    }
    const download = await call(`${engine.url}/v2/medias/${uid}/file`, { headers: { 'x-api-key': KEY } });
    assert.equal(download.status, 200);
    // Nobody asks any more: it goes after the grace period.
    const deadline = Date.now() + 10_000;
    while ((await metadata(engine, uid)).status === 200) {
      assert.ok(Date.now() < deadline, 'removed once left alone');
      await sleep(1_100);
    }
  });

  it('removes media older than the age limit, also those a stopped engine left on disk', async () => {
    const dataDir = await fsp.mkdtemp(join(tmpdir(), 'me-retention-'));
    engine = await startTestEngine({ retention: { maxAgeMs: null, graceMs: 0 } }, dataDir);
    const uid = await finishedMedia('old.wav');
    await engine.close();
    await sleep(600);
    const removed: RemovedMedia[] = [];
    engine = await startTestEngine(
      { retention: { maxAgeMs: 500, graceMs: 0 }, onRemoved: (r) => removed.push(r) },
      dataDir,
    );
    const deadline = Date.now() + 10_000;
    while (removed.length === 0) {
      assert.ok(Date.now() < deadline, 'the start sweeps what is due');
      await sleep(50);
    }
    assert.equal(removed[0].record.uid, uid);
    assert.match(removed[0].reason, /^finished or last asked for \d+ s ago, more than the 1 s kept$/);
    assert.equal((await metadata(engine, uid)).status, 404);
  });

  /** The bytes of every file under the engine's media folder, as find(1) lists them. */
  function bytesInMediaFolder(): number {
    return execFileSync('find', [join(engine!.dataDir, 'media'), '-type', 'f', '-printf', '%s\\n'], {
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean)
      .reduce((sum, line) => sum + Number(line), 0);
  }

  it('tells its disk use as its data folder holds it, and removes the finished media now but those kept', async () => {
    const removed: RemovedMedia[] = [];
    engine = await startTestEngine({ onRemoved: (r) => removed.push(r) });
    assert.deepEqual(await engine.storage.use(), { media: 0, finished: 0, bytes: 0, oldest: null });
    const first = await finishedMedia('first.wav');
    const second = await finishedMedia('second.wav');
    const third = await finishedMedia('third.wav');
    const use = await engine.storage.use();
    const firstInserted = (await metadata(engine, first)).json.inserted_at;
    assert.deepEqual(use, { media: 3, finished: 3, bytes: bytesInMediaFolder(), oldest: firstInserted });
    assert.ok(use.bytes >= 6 * wav.length, `inputs and outputs counted: ${use.bytes}`);
    // The default rule would keep them a week: the removal does not wait for it.
    const done = await engine.storage.removeFinished(new Set([second]));
    assert.equal(done.removed, 2);
    assert.equal(done.bytes, use.bytes - bytesInMediaFolder());
    assert.deepEqual(
      removed.map((r) => [r.record.uid, r.reason]),
      [
        [first, 'removed from the editor'],
        [third, 'removed from the editor'],
      ],
    );
    for (const uid of [first, third]) assert.equal((await metadata(engine, uid)).status, 404);
    assert.equal((await metadata(engine, second)).status, 200, 'the kept one stays');
    const after = await engine.storage.use();
    assert.deepEqual(after, { media: 1, finished: 1, bytes: bytesInMediaFolder(), oldest: after.oldest });
    assert.ok(after.bytes > 0);
    assert.deepEqual(engine.storage.retention, {
      maxAgeMs: 7 * 24 * 3600_000,
      maxTotalBytes: 5 * 1024 ** 3,
      graceMs: 3600_000,
      sweepIntervalMs: 600_000,
    });
  });
});
