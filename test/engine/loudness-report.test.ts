// The loudness report (GET /v2/medias/{uid}/loudness, a local-engine extension), as a user checks it:
// its series against ffmpeg's ebur128 run on the file uploaded and on the file downloaded.
import assert from 'node:assert/strict';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoudnessReport, LoudnessTrack } from '../../src/contract/loudness-report';
import { encodeWav } from '../fixtures/audio';
import { ffmpegLoudness, ffmpegLoudnessTimeline } from '../fixtures/ffmpeg';
import { makeWav } from '../fixtures/media';
import { mix, speechAt, whiteNoise } from '../enhance/test-media';
import { detailText } from './answers';
import { call, KEY, metadata, settled, startTestEngine, upload, type Answer, type TestEngine } from './helpers';

/** ffmpeg reports short-term loudness from 3 s on. */
const FIRST_FULL_SECOND = 3;

describe('engine: loudness report of a media', function () {
  this.timeout(120_000);
  let engine: TestEngine;
  let dir: string;
  /** The shipped speech sample (10.58 s) at 48 kHz with white noise 10 dB under it, 16-bit mono. */
  let noisySpeech: string;

  before(async () => {
    engine = await startTestEngine();
    dir = await mkdtemp(join(tmpdir(), 'engine-loudness-report-'));
    const speech = await speechAt(48_000, dir);
    noisySpeech = join(dir, 'noisy-speech.wav');
    const noisy = mix(speech, whiteNoise(speech.length, 7), 10).map((s) => s * 0.3);
    await writeFile(noisySpeech, encodeWav({ sampleRate: 48_000, channels: 1, bits: 16 }, [noisy]));
  });
  after(async () => {
    await engine.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const loudnessOf = (on: TestEngine, uid: string): Promise<Answer> =>
    call(`${on.url}/v2/medias/${encodeURIComponent(uid)}/loudness`, { headers: { 'x-api-key': KEY } });

  async function processed(on: TestEngine, file: string, name: string, settings: object) {
    const res = await upload(on, await readFile(file), name, { media_enhancement: JSON.stringify(settings) });
    assert.equal(res.status, 201, res.text);
    const done = await settled(on, res.json.uid, 60_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    const download = await call(`${on.url}/v2/medias/${res.json.uid}/file`, { headers: { 'x-api-key': KEY } });
    const out = join(dir, `${res.json.uid}-${name}`);
    await writeFile(out, download.bytes);
    return { uid: res.json.uid, out };
  }

  /** The track's series against ffmpeg's on the same file: short-term within 0.1 LU from 3 s on, peaks within 0.3 dB. */
  async function assertMatchesFfmpeg(track: LoudnessTrack, file: string, what: string) {
    const [reference, summary] = await Promise.all([ffmpegLoudnessTimeline(file), ffmpegLoudness(file)]);
    const seconds = Math.round(track.duration_s);
    assert.equal(
      track.short_term_lufs.length,
      seconds,
      `${what}: one short-term value per second of ${track.duration_s} s`,
    );
    assert.equal(track.true_peak_per_second_dbtp.length, seconds, `${what}: one true peak per second`);
    for (let i = FIRST_FULL_SECOND - 1; i < reference.shortTermLufs.length; i++) {
      const ours = track.short_term_lufs[i];
      assert.ok(ours !== null, `${what}: speech at ${i + 1} s is not silence`);
      assert.ok(
        Math.abs(ours - reference.shortTermLufs[i]) <= 0.1,
        `${what}: short-term at ${i + 1} s: ours ${ours}, ffmpeg ${reference.shortTermLufs[i]}`,
      );
    }
    for (let i = 0; i < Math.floor(track.duration_s); i++) {
      const ours = track.true_peak_per_second_dbtp[i];
      assert.ok(ours !== null, `${what}: second ${i} is not silence`);
      assert.ok(
        Math.abs(ours - reference.truePeakDbtp[i]) <= 0.3,
        `${what}: true peak in second ${i}: ours ${ours}, ffmpeg ${reference.truePeakDbtp[i]}`,
      );
    }
    assert.ok(Math.abs(track.integrated_lufs! - summary.integratedLufs) <= 0.1, `${what}: integrated`);
    assert.ok(Math.abs(track.true_peak_dbtp! - summary.truePeakDbtp) <= 0.3, `${what}: true peak`);
  }

  it('gives the input and output loudness over time, as ffmpeg measures the uploaded and the downloaded WAV', async () => {
    const { uid, out } = await processed(engine, noisySpeech, 'noisy.wav', { loudness_target: -18, true_peak: -2 });
    const answer = await loudnessOf(engine, uid);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.equal(answer.headers['x-loudness-report'], 'ready');
    const report = answer.json as unknown as LoudnessReport;
    assert.equal(report.uid, uid);
    assert.equal(report.interval_s, 1);
    assert.equal(report.target_lufs, -18, "the media's target");
    assert.equal(report.true_peak_limit_dbtp, -2, "the media's ceiling");
    assert.equal(report.input.short_term_lufs.length, 11, '10.58 s rounds to 11 values');
    await assertMatchesFfmpeg(report.input, noisySpeech, 'input');
    await assertMatchesFfmpeg(report.output, out, 'output');
    // What the enhancement did shows: the output sits at the target, under the ceiling in every second.
    assert.ok(Math.abs(report.output.integrated_lufs! + 18) <= 0.5);
    for (const peak of report.output.true_peak_per_second_dbtp) assert.ok(peak === null || peak <= -2 + 0.05);
    // The metadata's figures and the report's agree.
    const params = (await metadata(engine, uid)).json.enhancement_params;
    assert.equal(params.input_loudness_lufs, report.input.integrated_lufs);
    assert.equal(params.output_loudness_lufs, report.output.integrated_lufs);
  });

  it('measures the output after encoding: an MP3 as ffmpeg decodes the downloaded file', async () => {
    const { uid, out } = await processed(engine, noisySpeech, 'noisy.wav', {
      loudness_target: -16,
      true_peak: -1,
      transcode: 'MP3',
    });
    const report = (await loudnessOf(engine, uid)).json as unknown as LoudnessReport;
    await assertMatchesFfmpeg(report.input, noisySpeech, 'input');
    await assertMatchesFfmpeg(report.output, out, 'MP3 output');
  });

  it('counts in the metadata window: the same X-RateLimit headers, one more used per request', async () => {
    const { uid } = await processed(engine, noisySpeech, 'counted.wav', {});
    const first = await metadata(engine, uid);
    const report = await loudnessOf(engine, uid);
    const after = await metadata(engine, uid);
    const used = (answer: Answer) => Number(answer.headers['x-ratelimit-used']);
    assert.equal(report.headers['x-ratelimit-limit'], first.headers['x-ratelimit-limit']);
    assert.equal(report.headers['x-ratelimit-window'], first.headers['x-ratelimit-window']);
    assert.equal(used(report), used(first) + 1);
    assert.equal(used(after), used(first) + 2);
  });

  it('refuses past the metadata limit with 429 and Retry-After', async () => {
    const limited = await startTestEngine({ limits: { getMetadata: 2 }, processorModule: copyProcessor() });
    try {
      const res = await upload(limited, makeWav(1, 8000), 'tone.wav');
      assert.equal((await metadata(limited, res.json.uid)).status, 200);
      assert.notEqual((await loudnessOf(limited, res.json.uid)).status, 429);
      const refused = await loudnessOf(limited, res.json.uid);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['x-ratelimit-remaining'], '0');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    } finally {
      await limited.dispose();
    }
  });

  it('marks every answer, refusals included, and counts only the answers about a media it holds', async () => {
    // Room for the polls that wait for the media; the window is filled on purpose below.
    const limited = await startTestEngine({ limits: { getMetadata: 40 }, processorModule: copyProcessor() });
    try {
      const res = await upload(limited, makeWav(1, 8000), 'tone.wav');
      const uid = res.json.uid;
      await settled(limited, uid);
      const used = async () => Number((await metadata(limited, uid)).headers['x-ratelimit-used']);
      const report = (answer: Answer) => answer.headers['x-loudness-report'];
      const path = (of: string) => `${limited.url}/v2/medias/${encodeURIComponent(of)}/loudness`;
      const before = await used(); // this metadata read is counted
      const noKey = await call(path(uid));
      assert.equal(noKey.status, 401);
      assert.equal(report(noKey), 'refused', '401');
      const wrongMethod = await call(path(uid), { method: 'POST', headers: { 'x-api-key': KEY } });
      assert.equal(wrongMethod.status, 405);
      assert.equal(report(wrongMethod), 'refused', '405');
      const invalid = await loudnessOf(limited, 'u'.repeat(201));
      assert.equal(invalid.status, 422);
      assert.equal(report(invalid), 'refused', '422');
      assert.equal(invalid.headers['x-ratelimit-used'], String(before), 'a refused uid gives its place back');
      const unknown = await loudnessOf(limited, 'no-such-media');
      assert.equal(unknown.status, 404);
      assert.equal(report(unknown), 'unknown-media');
      assert.equal(unknown.headers['x-ratelimit-used'], String(before), 'an unknown media gives its place back');
      assert.equal(await used(), before + 1, 'only the metadata read between counted');
      // An answer about the media counts.
      const none = await loudnessOf(limited, uid);
      assert.equal(none.status, 404);
      assert.equal(report(none), 'none');
      assert.equal(none.headers['x-ratelimit-used'], String(before + 2));
      while ((await used()) < 40);
      const over = await loudnessOf(limited, uid);
      assert.equal(over.status, 429);
      assert.equal(report(over), 'refused', '429');
      assert.ok(Number(over.headers['retry-after']) >= 1);
      // Past the limit even a refused uid is answered 429, and marked.
      const overInvalid = await loudnessOf(limited, 'u'.repeat(201));
      assert.equal(overInvalid.status, 429);
      assert.equal(report(overInvalid), 'refused');
      // The other routes are not marked.
      assert.equal((await metadata(limited, uid)).headers['x-loudness-report'], undefined);
    } finally {
      await limited.dispose();
    }
  });

  it('answers 404 for an unknown media, marked unknown-media', async () => {
    const answer = await loudnessOf(engine, 'no-such-media');
    assert.equal(answer.status, 404);
    assert.equal(answer.headers['x-loudness-report'], 'unknown-media');
    assert.match(detailText(answer.json), /no media with uid "no-such-media"/);
  });

  it('answers 412 while the media is processing, as a download would, marked pending', async () => {
    const slow = await startTestEngine({ processingDelayMs: 60_000 });
    try {
      const res = await upload(slow, makeWav(1, 8000), 'slow.wav');
      const answer = await loudnessOf(slow, res.json.uid);
      const download = await call(`${slow.url}/v2/medias/${res.json.uid}/file`, { headers: { 'x-api-key': KEY } });
      assert.equal(answer.status, download.status);
      assert.equal(answer.status, 412);
      assert.equal(answer.headers['x-loudness-report'], 'pending');
      assert.match(detailText(answer.json), /not available: it is (PENDING|PROCESSING)/);
    } finally {
      await slow.dispose();
    }
  });

  it('answers 404 marked none, saying why, for a media it made no report for (a copying processor, a failure)', async () => {
    const copying = await startTestEngine({ processorModule: copyProcessor() });
    const failing = await startTestEngine({ faults: { failProcessingRate: 1 } });
    try {
      const copied = await upload(copying, makeWav(1, 8000), 'copied.wav');
      await settled(copying, copied.json.uid);
      const none = await loudnessOf(copying, copied.json.uid);
      assert.equal(none.status, 404);
      assert.equal(none.headers['x-loudness-report'], 'none');
      assert.match(detailText(none.json), /has no loudness report: its processing measured no loudness/);
      const failed = await upload(failing, makeWav(1, 8000), 'failed.wav');
      await settled(failing, failed.json.uid);
      const answer = await loudnessOf(failing, failed.json.uid);
      assert.equal(answer.status, 404);
      assert.equal(answer.headers['x-loudness-report'], 'none');
      assert.match(detailText(answer.json), /has no loudness report: it FAILED/);
    } finally {
      await copying.dispose();
      await failing.dispose();
    }
  });

  it('keeps the report across a restart, and retention removes it with the media', async () => {
    const first = await startTestEngine();
    const { uid } = await processed(first, noisySpeech, 'kept.wav', {});
    const before = await loudnessOf(first, uid);
    await first.close();
    const second = await startTestEngine({}, first.dataDir);
    const after = await loudnessOf(second, uid);
    await second.close();
    assert.equal(after.status, 200);
    assert.deepEqual(after.json, before.json);
    const third = await startTestEngine({ retention: { maxAgeMs: 1, graceMs: 0, sweepIntervalMs: 50 } }, first.dataDir);
    try {
      const end = Date.now() + 10_000;
      while ((await loudnessOf(third, uid)).status === 200 && Date.now() < end)
        await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal((await loudnessOf(third, uid)).headers['x-loudness-report'], 'unknown-media');
      // The folder goes just after the media is forgotten.
      const folder = join(first.dataDir, 'media', uid);
      while (
        Date.now() < end &&
        (await access(folder).then(
          () => true,
          () => false,
        ))
      )
        await new Promise((resolve) => setTimeout(resolve, 50));
      await assert.rejects(access(folder), 'the media folder, report included, is gone');
    } finally {
      await third.dispose();
    }
  });
});

function copyProcessor(): string {
  return join(__dirname, '../../src/engine/processors/copy-processor.js');
}
