// client.getLoudnessReport against the local engine over loopback, and against a service without the route.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MediaEnhanceClient, MediaEnhanceError, type LoudnessReport } from '../../src';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

const FAST_POLL = {
  initialMs: [50, 100] as [number, number],
  longMs: [100, 200] as [number, number],
  longAfterMs: 5_000,
};

/** A service that knows no route: 404 to everything, as a remote without this extension answers. */
async function serviceWithoutRoute(): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ detail: 'Not Found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('client: loudness report', function () {
  this.timeout(60_000);
  let engine: TestEngine;
  let client: MediaEnhanceClient;

  before(async () => {
    engine = await startTestEngine();
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey, poll: FAST_POLL });
  });
  after(async () => {
    await client.close();
    await engine.dispose();
  });

  it("returns a finished media's report: both tracks, one value per second, the media's target and ceiling", async () => {
    const media = await client.uploadMedia({
      file: makeWav(4, 48_000, 2),
      fileName: 'tone.wav',
      // FINCH: a tone is no speech, and LARK_V2's DeepFilterNet3 takes it for noise.
      media_enhancement: { loudness_target: -20, true_peak: -3, enhancement_model: 'FINCH' },
    });
    await client.waitForCompletion(media.uid);
    const report: LoudnessReport | null = await client.getLoudnessReport(media.uid);
    assert.ok(report, 'the built-in engine offers the report');
    assert.equal(report.uid, media.uid);
    assert.equal(report.target_lufs, -20);
    assert.equal(report.true_peak_limit_dbtp, -3);
    for (const track of [report.input, report.output]) {
      assert.equal(track.short_term_lufs.length, 4);
      assert.equal(track.true_peak_per_second_dbtp.length, 4);
    }
    // A steady -20 dBFS tone: its short-term loudness is the same every second once the 3 s window is full.
    assert.ok(Math.abs(report.output.short_term_lufs[3]! - report.output.integrated_lufs!) < 0.2);
    assert.ok(Math.abs(report.output.integrated_lufs! + 20) <= 0.5);
    // It counted in the client's metadata window.
    assert.ok(client.rateLimit('getMetadata').used >= 1);
  });

  it('throws NOT_FOUND for an unknown media, and NOT_READY while it is processed', async () => {
    await assert.rejects(
      client.getLoudnessReport('no-such-media'),
      (err: unknown) => err instanceof MediaEnhanceError && err.code === 'NOT_FOUND' && err.status === 404,
    );
    const slow = await startTestEngine({ processingDelayMs: 60_000 });
    const slowClient = new MediaEnhanceClient({ baseUrl: slow.url, apiKey: slow.apiKey });
    try {
      const media = await slowClient.uploadMedia({ file: makeWav(1, 8_000), fileName: 'slow.wav' });
      await assert.rejects(
        slowClient.getLoudnessReport(media.uid),
        (err: unknown) => err instanceof MediaEnhanceError && err.code === 'NOT_READY' && err.status === 412,
      );
    } finally {
      await slowClient.close();
      await slow.dispose();
    }
  });

  it('returns null for a media the engine made no report for', async () => {
    const copying = await startTestEngine({
      processorModule: require.resolve('../../src/engine/processors/copy-processor'),
    });
    const copyClient = new MediaEnhanceClient({ baseUrl: copying.url, apiKey: copying.apiKey, poll: FAST_POLL });
    try {
      const media = await copyClient.uploadMedia({ file: makeWav(1, 8_000), fileName: 'copied.wav' });
      await copyClient.waitForCompletion(media.uid);
      assert.equal(await copyClient.getLoudnessReport(media.uid), null);
    } finally {
      await copyClient.close();
      await copying.dispose();
    }
  });

  it('returns null from a service without the route: not offered, not an error', async () => {
    const remote = await serviceWithoutRoute();
    const remoteClient = new MediaEnhanceClient({ baseUrl: remote.url, apiKey: 'remote-key' });
    try {
      assert.equal(await remoteClient.getLoudnessReport('some-media'), null);
      assert.deepEqual(remote.requests, ['GET /v2/medias/some-media/loudness'], 'asked once, not retried');
    } finally {
      await remoteClient.close();
      await remote.close();
    }
  });

  it('sends nothing for an invalid uid', async () => {
    await assert.rejects(
      client.getLoudnessReport(''),
      (err: unknown) => err instanceof MediaEnhanceError && err.code === 'VALIDATION',
    );
  });
});
