// Progress a person can trust (docs/interface.md#progress): the time left is told within the job's first
// seconds from the pace measured in the job itself, follows that pace as it changes, says nothing once it
// has run out with the work not done, and the last stage (normalizing, encoding with ffmpeg, measuring
// what was encoded) tells its own progress instead of standing still at its first percent.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaEnhanceClient } from '../../src';
import { progressOf } from '../../src/contract/media-progress';
import { ProgressEstimate } from '../../src/engine/jobs/progress-estimate';
import { processMedia } from '../../src/engine/processors/enhance-processor';
import { StagedProgress } from '../../src/engine/processors/staged-progress';
import { noteProgressSetAt, publicMetadata, type MediaRecord } from '../../src/engine/storage/media-record';
import { speechLike, writeWavFile } from '../fixtures/audio';
import { readUntil } from '../fixtures/read-until';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

describe('engine: progress a person can trust', function () {
  this.timeout(180_000);

  it('tells the time left of a 20-minute job within its first seconds of work, from the pace measured in it', () => {
    let now = 0;
    const estimate = new ProgressEstimate(() => now);
    // A slow start (a thread, a model loading), then a tenth of a percent a second, told every 250 ms.
    now = 3_000;
    let share = 0.001;
    assert.equal(estimate.update(share).seconds_left, null);
    let told: number | null = null;
    while (told === null && now < 3_000 + 10_000) {
      now += 250;
      share += 0.001 / 4;
      told = estimate.update(share).seconds_left;
    }
    assert.ok(told !== null, 'no estimate within 10 s of work');
    assert.ok(now - 3_000 <= 2_500, `the first estimate came ${now - 3_000} ms into the work`);
    const truth = (1 - share) * 1000;
    assert.ok(Math.abs(told / truth - 1) < 0.05, `told ${told} s, ${truth.toFixed(0)} s left at that pace`);
  });

  it('follows the pace the work has now, not its average since the start', () => {
    let now = 0;
    const estimate = new ProgressEstimate(() => now);
    let share = 0;
    const run = (seconds: number, percentPerSecond: number) => {
      for (let i = 0; i < seconds * 4; i++) {
        now += 250;
        share += percentPerSecond / 100 / 4;
        estimate.update(share);
      }
    };
    run(30, 1); // a quick stage...
    run(25, 0.25); // ... then one four times slower (the machine got busy, or the weights were off)
    const told = estimate.update(share).seconds_left!;
    const truth = (1 - share) / 0.0025;
    assert.ok(Math.abs(told / truth - 1) < 0.1, `told ${told} s, ${truth.toFixed(0)} s left at the pace it has now`);
  });

  it('tells the pace of a slow stage between two whole percents', () => {
    let now = 0;
    const posted: number[] = [];
    const staged = new StagedProgress(
      { decode: 0, measure: 0, enhance: 1, normalize: 0, outputs: 0 },
      (share) => posted.push(share),
      () => now,
    );
    // A long file's enhancement: a twentieth of a percent every 100 ms, 3 s long, all under 1% done.
    for (let i = 1; i <= 30; i++) {
      now += 100;
      staged.at('enhance', i * 0.0003);
    }
    assert.ok(posted.length >= 8, `posted ${posted.length} times in 3 s: ${posted.join(', ')}`);
  });

  it('says nothing of the time left once the estimate has run out with the work not done', () => {
    const record = {
      uid: 'u',
      enhancement_status: 'PROCESSING',
      progress: { percent: 91, seconds_left: 1 },
    } as unknown as MediaRecord;
    noteProgressSetAt(record, Date.now());
    assert.equal((publicMetadata(record).progress as { seconds_left: unknown }).seconds_left, 1);
    noteProgressSetAt(record, Date.now() - 5_000);
    assert.deepEqual(publicMetadata(record).progress, { percent: 91, seconds_left: null });
  });

  it("the last stage's encode tells its own progress: no long stretch without a report (WAV to MP3, loudness only)", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'progress-trust-'));
    try {
      await writeWavFile(join(dir, 'input'), { sampleRate: 48_000, channels: 1, bits: 16 }, 120, speechLike(48_000, 1));
      const reports: Array<{ at: number; share: number }> = [];
      await processMedia(
        {
          inputPath: join(dir, 'input'),
          outputPath: join(dir, 'output'),
          input: { kind: 'audio', ext: 'wav', contentType: 'audio/wav' },
          settings: { loudness_target: -16, true_peak: -1, enhancement_model: 'LOUDNESS_ONLY', transcode: 'MP3' },
        },
        { ffmpegPath: 'ffmpeg' },
        {
          threads: 1,
          runElsewhere: () => Promise.resolve(undefined),
          progress: (share) => reports.push({ at: Date.now(), share }),
        },
      );
      const end = Date.now();
      // From the first report of the last stage to the job's end: normalizing, encoding, decoding and
      // measuring once or twice. Without the encode's own progress, most of a round passes without a word.
      const first = reports.findIndex((r) => r.share >= 0.1);
      const times = [...reports.slice(first).map((r) => r.at), end];
      const gaps = times.slice(1).map((at, i) => at - times[i]);
      const longest = Math.max(...gaps);
      assert.ok(
        longest <= 0.15 * (end - times[0]),
        `${longest} ms without a report in a last stage of ${end - times[0]} ms: ${JSON.stringify(reports.map((r) => [r.at - times[0], +r.share.toFixed(3)]))}`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('an engine running a long job', () => {
    let engine: TestEngine | undefined;
    let client: MediaEnhanceClient | undefined;
    afterEach(async () => {
      await client?.close();
      await engine?.dispose();
      client = engine = undefined;
    });

    it('tells the time left while the work is still under 5% done', async () => {
      engine = await startTestEngine({
        limits: { getMetadata: null },
        workers: 1,
        processorModule: join(__dirname, '..', 'fixtures', 'steady-processor.js'),
      });
      client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey, limits: { getMetadata: 100_000 } });
      const file = join(engine.dataDir, 'speech.wav');
      await writeWavFile(file, { sampleRate: 16_000, channels: 1, bits: 16 }, 2, speechLike(16_000, 1));
      const media = await client.uploadMedia({ file });
      // The processor moves 1% a second (slower on a busy machine): read as a user watching the status would.
      const told = await readUntil(
        () => client!.getMetadata(media.uid),
        (metadata) => progressOf(metadata)?.seconds_left !== null && progressOf(metadata) !== undefined,
        'an estimate of the time left',
        { timeoutMs: 90_000 },
      );
      const progress = progressOf(told)!;
      assert.ok(progress.percent < 5, `the first estimate came at ${progress.percent}%`);
      assert.ok(progress.seconds_left! > 0, JSON.stringify(progress));
    });
  });
});
