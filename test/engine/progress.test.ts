// Progress (docs/interface.md#progress): while a media is PROCESSING its metadata says how far the work is
// and how long the rest takes at the pace so far; read here as a client would, many times over three minutes of speech (long enough on a fast machine for the estimate, which waits 2 s, to be judged).
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { MediaEnhanceClient } from '../../src';
import { progressOf, type MediaProgress } from '../../src/contract/media-progress';
import { ProgressEstimate } from '../../src/engine/jobs/progress-estimate';
import { speechLike, writeWavFile } from '../fixtures/audio';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

interface Reading {
  at: number;
  status: string;
  progress?: MediaProgress;
}

describe('progress of a processing media', function () {
  this.timeout(120_000);
  let engine: TestEngine | undefined;
  let client: MediaEnhanceClient | undefined;

  afterEach(async () => {
    await client?.close();
    await engine?.dispose();
    client = engine = undefined;
  });

  it('estimates from the pace since the work first moved, says nothing before, and never goes back', () => {
    let now = 0;
    const estimate = new ProgressEstimate(() => now);
    assert.deepEqual(estimate.update(0), { percent: 0, seconds_left: null });
    now = 2_000; // a slow start (a thread, a model loading) before the first work is done
    assert.deepEqual(estimate.update(0.1), { percent: 10, seconds_left: null });
    now = 2_200;
    assert.deepEqual(estimate.update(0.14), { percent: 14, seconds_left: null }, 'moved too little to tell');
    now = 6_000; // then 10% a second
    assert.deepEqual(estimate.update(0.5), { percent: 50, seconds_left: 5 });
    now = 6_500;
    assert.deepEqual(
      estimate.update(0.4),
      { percent: 50, seconds_left: 5.6 },
      'a lower share is not shown; the slower pace is',
    );
  });

  it('rises monotonically to the end, and estimates the time left within a factor of two, three times in four (3 minutes of speech, FINCH)', async () => {
    engine = await startTestEngine({ limits: { getMetadata: null }, workers: 1 });
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey, limits: { getMetadata: 100_000 } });
    const file = join(engine.dataDir, 'speech-180s.wav');
    await writeWavFile(file, { sampleRate: 48_000, channels: 1, bits: 16 }, 180, speechLike(48_000, 1));
    const media = await client.uploadMedia({ file, media_enhancement: { enhancement_model: 'FINCH' } });
    await fsp.rm(file);

    const readings: Reading[] = [];
    let completedAt = NaN;
    for (;;) {
      const metadata = await client.getMetadata(media.uid);
      const at = Date.now();
      readings.push({ at, status: metadata.enhancement_status, progress: progressOf(metadata) });
      if (metadata.enhancement_status === 'COMPLETED') {
        completedAt = Date.parse(String(metadata.updated_at));
        break;
      }
      assert.notEqual(metadata.enhancement_status, 'FAILED', JSON.stringify(metadata.error));
      await new Promise((resolve) => setTimeout(resolve, 40));
    }

    const processing = readings.filter((r) => r.status === 'PROCESSING' && r.progress);
    assert.ok(processing.length >= 5, `only ${processing.length} readings with progress`);
    for (const r of readings)
      if (r.status !== 'PROCESSING') assert.equal(r.progress, undefined, `progress shown while ${r.status}`);
    const percents = processing.map((r) => r.progress!.percent);
    for (let i = 1; i < percents.length; i++)
      assert.ok(percents[i] >= percents[i - 1], `progress went back: ${percents.join(', ')}`);
    assert.ok(percents.at(-1)! >= 80, `the last progress before completion was ${percents.at(-1)}%`);
    // ... and then COMPLETED: the whole work, the progress gone from the metadata.
    assert.equal(readings.at(-1)!.status, 'COMPLETED');
    assert.equal(readings.at(-1)!.progress, undefined);

    // The estimate against the time that was in fact left, where a second or more was left (the status
    // says "about 1 s" for anything less). The machine's other work moves the pace while a media is
    // processed, as it does for a user: three estimates in four within a factor of two of the truth.
    const judged = processing.filter((r) => r.progress!.seconds_left !== null && completedAt - r.at >= 1_000);
    assert.ok(judged.length >= 4, `only ${judged.length} estimates to judge: ${JSON.stringify(processing)}`);
    const ratios = judged.map((r) => r.progress!.seconds_left! / ((completedAt - r.at) / 1000));
    const within = ratios.filter((ratio) => ratio >= 0.5 && ratio <= 2);
    assert.ok(
      within.length >= 0.75 * ratios.length,
      `estimate / truth: ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}`,
    );
  });
  it('answers a held status request when the progress moves on by 10 points, not only on a change of state', async () => {
    engine = await startTestEngine({ limits: { getMetadata: null }, workers: 1, metadataWaitS: 30 });
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey, limits: { getMetadata: 100_000 } });
    // A minute, not three: what is judged here is when a held request is answered, not the estimate, and
    // the work still reports its progress in steps far finer than the 10 points between two answers.
    const file = join(engine.dataDir, 'speech-60s.wav');
    await writeWavFile(file, { sampleRate: 48_000, channels: 1, bits: 16 }, 60, speechLike(48_000, 1));
    const media = await client.uploadMedia({ file, media_enhancement: { enhancement_model: 'FINCH' } });
    const held = async () => {
      const answer = await fetch(`${engine!.url}/v2/medias/${media.uid}/metadata?wait=30`, {
        headers: { 'x-api-key': engine!.apiKey },
      });
      return (await answer.json()) as Record<string, unknown>;
    };
    // Held from the start: answered when processing starts, then each time the work moves on by a tenth.
    const answers: Array<{ status: unknown; percent?: number }> = [];
    for (;;) {
      const metadata = await held();
      answers.push({ status: metadata.enhancement_status, percent: progressOf(metadata)?.percent });
      if (metadata.enhancement_status === 'COMPLETED') break;
      assert.notEqual(metadata.enhancement_status, 'FAILED', JSON.stringify(metadata.error));
    }
    const midway = answers.filter((a) => a.status === 'PROCESSING' && a.percent !== undefined && a.percent >= 10);
    assert.ok(midway.length >= 2, `held answers while processing: ${JSON.stringify(answers)}`);
    for (let i = 1; i < midway.length; i++)
      assert.ok(
        midway[i].percent! - midway[i - 1].percent! >= 10,
        `answered for less than 10 points: ${JSON.stringify(answers)}`,
      );
  });
});
