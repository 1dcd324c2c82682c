// What a failed media says must help its owner and tell nothing of the machine: no path of the
// engine's data folder (or any other) reaches the media's error, the API, the log or the sidebar.
import assert from 'node:assert/strict';
import { MediaEnhanceClient, MediaEnhanceError } from '../../src';
import { publicMessage } from '../../src/engine/jobs/public-message';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

describe('engine: errors of a media name no path of the machine', function () {
  this.timeout(60_000);
  let engine: TestEngine;
  let client: MediaEnhanceClient;

  before(async () => {
    engine = await startTestEngine();
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
  });
  after(async () => {
    await client.close();
    await engine.dispose();
  });

  it('an MP3 ffmpeg cannot decode ends FAILED saying so, without the engine data path', async () => {
    // An ID3 tag makes it an MP3 to the engine; what follows is no MPEG audio at all.
    const broken = Buffer.concat([Buffer.from('ID3\x03\x00\x00\x00\x00\x00\x0a'), Buffer.alloc(4096, 0x41)]);
    const { uid } = await client.uploadMedia({ file: broken, fileName: 'episode.mp3' });
    const err = (await client.waitForCompletion(uid).then(
      () => assert.fail('completed'),
      (e: unknown) => e,
    )) as MediaEnhanceError;
    assert.equal(err.code, 'JOB_FAILED');
    const metadata = (await client.getMetadata(uid)) as unknown as { error?: { code: string; message: string } };
    assert.equal(metadata.error?.code, 'DECODE_FAILED');
    assert.match(metadata.error.message, /ffmpeg could not process the file/);
    for (const text of [err.message, metadata.error.message, ...engine.errorLines, ...engine.logLines]) {
      assert.ok(!text.includes(engine.dataDir), text);
      assert.doesNotMatch(text, /\/(tmp|home|var|root|work)\//, text);
    }
  });

  it('any absolute path in a media error becomes its last part; URLs and plain words stay', () => {
    assert.equal(
      publicMessage("the processor crashed: ENOENT: no such file, open '/srv/me/media/abc/input.wav'", '/srv/me'),
      "the processor crashed: ENOENT: no such file, open 'input.wav'",
    );
    assert.equal(
      publicMessage('cannot read /usr/lib/node_modules/x/worker.js (ffmpeg said: /opt/data/in: bad)', '/srv/me'),
      'cannot read worker.js (ffmpeg said: in: bad)',
    );
    const kept = 'file_download_url: http://127.0.0.1:9/a/b.wav answered HTTP 404 (1/2 done, and/or retried)';
    assert.equal(publicMessage(kept, '/srv/me'), kept);
  });
});
