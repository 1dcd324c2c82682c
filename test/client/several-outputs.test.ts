// The client's half of the several-outputs extension (docs/interface.md#several-outputs): `outputs` is
// sent only to a service that declares the extension, and a download names an output by its step.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appliedOutputsOf, ENGINE_EXTENSIONS, MediaEnhanceClient, MediaEnhanceError } from '../../src';
import { resumablePartPath } from '../../src/client/part-file';
import { LOUDNESS_ONLY, OUTPUT_ENCODING } from '../../src/contract/extensions';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

const FAST_POLL = { initialMs: [50, 100] as [number, number], longMs: [100, 200] as [number, number] };
const OUTPUTS = [{ name: 'feed', transcode: 'MP3' as const, bitrate_kbps: 128 }];

describe('client: several outputs', function () {
  this.timeout(60_000);
  let engine: TestEngine;
  const wav = makeWav(1, 16000);

  before(async () => {
    engine = await startTestEngine();
  });
  after(() => engine.dispose());

  const clientFor = (extensions?: readonly string[] | 'ask') =>
    new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey, poll: FAST_POLL, extensions });

  it('refuses `outputs` before sending to a service that does not declare several-outputs, naming it', async () => {
    for (const extensions of [undefined, [OUTPUT_ENCODING, LOUDNESS_ONLY]]) {
      const client = clientFor(extensions);
      const sentBefore = engine.requests().length;
      try {
        const err = (await client
          .uploadMedia({ file: wav, media_enhancement: { outputs: OUTPUTS } })
          .catch((e: unknown) => e)) as MediaEnhanceError;
        assert.ok(err instanceof MediaEnhanceError, String(err));
        assert.equal(err.code, 'VALIDATION', err.message);
        assert.match(
          err.details[0],
          /^body\.media_enhancement\.outputs: a member of the built-in engine's "several-outputs" extension, which this service does not declare/,
        );
        const video = (await client
          .enhanceVideo({ file: wav, video_enhancement: { outputs: [{ name: 'soundtrack' }] } })
          .catch((e: unknown) => e)) as MediaEnhanceError;
        assert.match(video.details[0], /^body\.video_enhancement\.outputs: .*"several-outputs" extension/);
        assert.equal(engine.requests().length, sentBefore, 'nothing reached the service');
      } finally {
        await client.close();
      }
    }
  });

  it('checks each output before sending, naming its loc, the value and the rule', async () => {
    const client = clientFor(ENGINE_EXTENSIONS);
    const sentBefore = engine.requests().length;
    try {
      const err = (await client
        .uploadMedia({
          file: wav,
          media_enhancement: { outputs: [{ name: 'feed' }, { name: 'feed', transcode: 'WAV', bitrate_kbps: 96 }] },
        })
        .catch((e: unknown) => e)) as MediaEnhanceError;
      assert.equal(err.code, 'VALIDATION', err.message);
      assert.deepEqual(
        err.details.map((d) => d.split(':')[0]),
        ['body.media_enhancement.outputs.1.name', 'body.media_enhancement.outputs.1.bitrate_kbps'],
      );
      assert.match(err.details[0], /an earlier output has this name; each output needs its own \(got "feed"\)$/);
      assert.equal(engine.requests().length, sentBefore);
    } finally {
      await client.close();
    }
  });

  it('asks a service that may declare it, then sends; a named step reaches the service, which names the media outputs', async () => {
    const client = clientFor('ask');
    try {
      const media = await client.uploadMedia({
        file: wav,
        fileName: 'tone.wav',
        media_enhancement: { outputs: OUTPUTS },
      });
      assert.deepEqual(media.enhancement_params?.outputs, OUTPUTS);
      const done = await client.waitForCompletion(media.uid, { timeoutMs: 50_000 });
      assert.deepEqual(
        appliedOutputsOf(done).map((o) => [o.name, o.file_name, o.output_encoding?.codec]),
        [['feed', 'tone_feed.mp3', 'mp3']],
      );
      // Into a folder under the service's name for it, through a part file of its own step.
      const folder = await mkdtemp(join(tmpdir(), 'several-outputs-client-'));
      try {
        const saved = await client.downloadToFile(media.uid, folder, { step: 'feed', resumable: true });
        assert.equal(saved.path, join(folder, 'tone_feed.mp3'));
        assert.equal(saved.contentType, 'audio/mpeg');
        assert.equal((await readFile(saved.path)).subarray(0, 3).toString('latin1'), 'ID3');
        assert.match(await resumablePartPath(folder, media.uid, 'feed'), /\.feed\.part$/);
        const enhanced = await client.downloadToFile(media.uid, folder);
        assert.equal(enhanced.path, join(folder, 'tone_enhanced.wav'));
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
      const err = (await client
        .downloadFile(media.uid, { step: 'master' })
        .catch((e: unknown) => e)) as MediaEnhanceError;
      assert.equal(err.code, 'NOT_FOUND', err.message);
      assert.match(err.message, /no output "master".*its outputs: "feed"/);
      const malformed = (await client
        .downloadFile(media.uid, { step: 'Master' })
        .catch((e: unknown) => e)) as MediaEnhanceError;
      assert.equal(malformed.code, 'VALIDATION');
      assert.match(malformed.details[0], /^query\.step: string does not match regex/);
    } finally {
      await client.close();
    }
  });
});
