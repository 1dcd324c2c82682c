// Loudness only (the built-in engine's `loudness-only` extension): music and clean recordings normalised
// without being denoised, and a service that does not declare the extension never sent the value.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGINE_EXTENSIONS, MediaEnhanceClient, MediaEnhanceError } from '../../src';
import { openWav } from '../../src/audio/wav-reader';
import { encodeWav, musicLike, sine } from '../fixtures/audio';
import { ffmpegLoudness } from '../fixtures/ffmpeg';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

const FAST_POLL = { initialMs: [50, 100] as [number, number], longMs: [100, 200] as [number, number] };
const RATE = 48_000;

/** Every sample of a mono WAV file. */
async function samplesOf(path: string): Promise<Float32Array> {
  const source = await openWav(path);
  const parts: Float32Array[] = [];
  try {
    for await (const block of source.blocks())
      parts.push(Float32Array.from(block.samples[0].subarray(0, block.frames)));
  } finally {
    await source.close();
  }
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** dB of the energy of `a - gain * b` against that of `a`. */
function residualDb(a: Float32Array, b: Float32Array, gain: number): number {
  let signal = 0;
  let residual = 0;
  for (let i = 0; i < a.length; i++) {
    signal += a[i] ** 2;
    residual += (a[i] - gain * b[i]) ** 2;
  }
  return 10 * Math.log10(residual / signal);
}

describe('loudness only (the built-in engine extension)', function () {
  this.timeout(120_000);
  let engine: TestEngine;
  let dir: string;
  let input: string;

  before(async () => {
    engine = await startTestEngine();
    dir = await mkdtemp(join(tmpdir(), 'loudness-only-'));
    // Music with white noise and a 50 Hz hum under it: all that FINCH or LARK_V2 would take out.
    const music = musicLike(RATE, 1, 5, -30)(RATE * 6)[0];
    const hum = sine(RATE, 50, -40, 6);
    let seed = 11;
    for (let i = 0; i < music.length; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      music[i] += hum[i] + 0.003 * (seed / 2 ** 32 - 0.5);
    }
    input = join(dir, 'music.wav');
    await writeFile(input, encodeWav({ sampleRate: RATE, channels: 1, bits: 32, float: true }, [music]));
  });
  after(async () => {
    await engine.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const clientFor = (extensions?: readonly string[] | 'ask') =>
    new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey, poll: FAST_POLL, extensions });

  it('normalises to the target and limits peaks, and leaves noise, hum and everything else in place', async () => {
    const client = clientFor(ENGINE_EXTENSIONS);
    try {
      const media = await client.uploadMedia({
        file: input,
        media_enhancement: { enhancement_model: 'LOUDNESS_ONLY', loudness_target: -23, true_peak: -1 },
      });
      const done = await client.waitForCompletion(media.uid, { timeoutMs: 60_000 });
      const params = done.enhancement_params as Record<string, unknown> & {
        speech_enhancement: Record<string, unknown>;
      };
      assert.equal(params.processing, 'loudness');
      assert.equal(params.target_reached, true);
      assert.equal(params.speech_enhancement.chain, '');
      assert.equal(params.speech_enhancement.noise_reduction, null);
      assert.equal(params.speech_enhancement.high_pass, null);
      assert.equal(params.speech_enhancement.note, 'not applied: loudness only was asked');
      const out = join(dir, 'music-out.wav');
      await client.downloadToFile(media.uid, out, { ifExists: 'overwrite' });
      const measured = await ffmpegLoudness(out);
      assert.ok(Math.abs(measured.integratedLufs - -23) <= 0.2, `ffmpeg reads ${measured.integratedLufs} LUFS`);
      assert.ok(measured.truePeakDbtp <= -0.9, `ffmpeg reads ${measured.truePeakDbtp} dBTP`);
      // The output is the input times the gain: nothing filtered, denoised or levelled.
      const gain = 10 ** (Number(params.gain_db) / 20);
      const residual = residualDb(await samplesOf(out), await samplesOf(input), gain);
      assert.ok(residual < -40, `the output differs from the gained input by ${residual.toFixed(1)} dB`);
    } finally {
      await client.close();
    }
  });

  it('FINCH on the same file does take the noise and hum out (what loudness only leaves alone)', async () => {
    const client = clientFor(ENGINE_EXTENSIONS);
    try {
      const media = await client.uploadMedia({
        file: input,
        media_enhancement: { enhancement_model: 'FINCH', loudness_target: -23, true_peak: -1 },
      });
      const done = await client.waitForCompletion(media.uid, { timeoutMs: 60_000 });
      const out = join(dir, 'music-finch.wav');
      await client.downloadToFile(media.uid, out, { ifExists: 'overwrite' });
      const gain = 10 ** (Number(done.enhancement_params?.gain_db) / 20);
      const residual = residualDb(await samplesOf(out), await samplesOf(input), gain);
      assert.ok(residual > -20, `FINCH's output is not the gained input (${residual.toFixed(1)} dB)`);
    } finally {
      await client.close();
    }
  });

  it('is refused before sending for a service that does not declare the extension, naming the member', async () => {
    const client = clientFor();
    const before = engine.requests().length;
    try {
      const err = await client
        .uploadMedia({ file: input, media_enhancement: { enhancement_model: 'LOUDNESS_ONLY' } })
        .then(
          () => assert.fail('sent'),
          (e: unknown) => e as MediaEnhanceError,
        );
      assert.ok(err instanceof MediaEnhanceError);
      assert.equal(err.code, 'VALIDATION');
      assert.match(
        err.message,
        /body\.media_enhancement\.enhancement_model: a value of the built-in engine's "loudness-only" extension, which this service does not declare/,
      );
      assert.match(err.message, /LOUDNESS_ONLY/);
      const video = await client
        .enhanceVideo({ file: input, video_enhancement: { enhancement_model: 'LOUDNESS_ONLY' } })
        .then(
          () => assert.fail('sent'),
          (e: unknown) => e as MediaEnhanceError,
        );
      assert.match(
        video.message,
        /video_enhancement\.enhancement_model: a value of the built-in engine's "loudness-only"/,
      );
      assert.equal(engine.requests().length, before, 'nothing reached the service');
    } finally {
      await client.close();
    }
  });

  it("with extensions 'ask', asks the service once and sends what it declares (the built-in engine)", async () => {
    const client = clientFor('ask');
    const asked = () => engine.requests().filter((entry) => entry.path === '/v2/extensions').length;
    const before = asked();
    try {
      // A request that uses no extension asks nothing.
      const plain = await client.uploadMedia({ file: input, media_enhancement: { loudness_target: -20 } });
      assert.ok(plain.uid);
      assert.equal(asked(), before, 'no extension used: nothing asked');
      for (let i = 0; i < 2; i++) {
        const media = await client.uploadMedia({
          file: input,
          media_enhancement: { enhancement_model: 'LOUDNESS_ONLY' },
        });
        const done = await client.waitForCompletion(media.uid, { timeoutMs: 60_000 });
        assert.equal(done.enhancement_params?.processing, 'loudness');
      }
      assert.equal(asked(), before + 1, 'asked once, for both');
      assert.deepEqual(await client.declaredExtensions(), ENGINE_EXTENSIONS);
    } finally {
      await client.close();
    }
  });

  it("with extensions 'ask', refuses before sending what a service without the declaration route does not declare", async () => {
    // A service of the interface that knows nothing of /v2/extensions: it answers 404.
    const { createServer } = await import('node:http');
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const client = new MediaEnhanceClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k', extensions: 'ask' });
    try {
      const err = await client
        .uploadMedia({ file: input, media_enhancement: { enhancement_model: 'LOUDNESS_ONLY' } })
        .then(
          () => assert.fail('sent'),
          (e: unknown) => e as MediaEnhanceError,
        );
      assert.equal(err.code, 'VALIDATION');
      assert.match(err.message, /"loudness-only" extension, which this service does not declare/);
      assert.deepEqual(seen, ['GET /v2/extensions'], 'only the question reached the service');
    } finally {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses an unknown model, naming LOUDNESS_ONLY among the permitted values', async () => {
    const client = clientFor(ENGINE_EXTENSIONS);
    try {
      const err = await client
        .uploadMedia({ file: input, media_enhancement: { enhancement_model: 'LOUDNESS' as 'FINCH' } })
        .then(
          () => assert.fail('sent'),
          (e: unknown) => e as MediaEnhanceError,
        );
      assert.equal(err.code, 'VALIDATION');
      assert.match(err.message, /permitted: 'FINCH', 'LARK', 'LARK_V2', 'LOUDNESS_ONLY'/);
    } finally {
      await client.close();
    }
  });
});
