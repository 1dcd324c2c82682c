// Speech enhancement through the engine, as a user meets it: a noisy recording uploaded, the enhanced
// file downloaded and measured, the metadata read.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeWav } from '../fixtures/audio';
import { ffmpegLoudness } from '../fixtures/ffmpeg';
import { rms } from '../enhance/speech-sample';
import { hum, mix, readWav, speechAt, whiteNoise } from '../enhance/test-media';
import { call, KEY, settled, startTestEngine, upload, type TestEngine } from './helpers';
import { nativeRuntime } from '../../src/enhance/onnx-runtimes';

describe('engine: speech enhancement before loudness', function () {
  this.timeout(120_000);
  let dir: string;
  let clean: Float32Array;
  let noisyStereo: Buffer;
  let noisyPath: string;
  /** The left channel as uploaded (after 16-bit rounding). */
  let noisyLeft: Float32Array;
  const rate = 44_100;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-speech-'));
    clean = await speechAt(rate, dir);
    // A 44.1 kHz stereo recording with white noise 5 dB under the speech and 50 Hz hum 15 dB under it.
    const humming = hum(clean.length, rate, 50);
    const channel = (seed: number) => mix(mix(clean, whiteNoise(clean.length, seed), 5), humming, 15);
    noisyStereo = encodeWav({ sampleRate: rate, channels: 2, bits: 16 }, [channel(1), channel(2)]);
    noisyPath = join(dir, 'noisy.wav');
    await writeFile(noisyPath, noisyStereo);
    noisyLeft = (await readWav(noisyPath)).channels[0];
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function enhance(engine: TestEngine, file: Buffer, settings: object) {
    const res = await upload(engine, file, 'noisy.wav', { media_enhancement: JSON.stringify(settings) });
    assert.equal(res.status, 201, res.text);
    const done = await settled(engine, res.json.uid, 60_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    const download = await call(`${engine.url}/v2/medias/${res.json.uid}/file`, { headers: { 'x-api-key': KEY } });
    const out = join(dir, `${res.json.uid}.wav`);
    await writeFile(out, download.bytes);
    return { params: done.enhancement_params, out };
  }

  /** How far the speech stands above the noise in its pauses (dB), pauses taken from the clean sample. */
  function speechOverPauses(signal: Float32Array): number {
    const frame = rate / 100;
    let speech = 0;
    let pause = 0;
    for (let at = 0; at + frame <= clean.length; at += frame) {
      const level = rms(clean, at, at + frame);
      if (level < 1e-4) pause += rms(signal, at, at + frame) ** 2;
      else if (level > 0.01) speech += rms(signal, at, at + frame) ** 2;
    }
    return 10 * Math.log10(speech / pause);
  }

  it('a noisy 44.1 kHz stereo recording comes out cleaner, at the target, at 44.1 kHz, and the metadata says what was done', async () => {
    const engine = await startTestEngine({ workers: 2 });
    try {
      const { params, out } = await enhance(engine, noisyStereo, {
        loudness_target: -16,
        true_peak: -1,
        enhancement_model: 'LARK_V2',
        enhancement_level: 100,
      });
      const output = await readWav(out);
      assert.equal(output.sampleRate, rate);
      assert.equal(output.channels.length, 2);
      assert.equal(output.channels[0].length, clean.length);
      const cleaner = speechOverPauses(output.channels[0]) - speechOverPauses(noisyLeft);
      assert.ok(cleaner >= 15, `the speech stands ${cleaner.toFixed(1)} dB further above the noise`);
      const measured = await ffmpegLoudness(out);
      assert.ok(Math.abs(measured.integratedLufs - -16) <= 0.5, `ffmpeg reads ${measured.integratedLufs} LUFS`);
      assert.ok(measured.truePeakDbtp <= -0.9);
      const speech = params.speech_enhancement;
      assert.equal(speech.model, 'LARK_V2');
      assert.equal(speech.chain, 'high-pass, hum removal, noise reduction, leveler');
      assert.equal(speech.hum_removal?.found, true);
      assert.equal(speech.hum_removal?.mains_hz, 50);
      assert.ok(speech.hum_removal?.harmonics_hz?.includes(100));
      assert.equal(speech.noise_reduction?.engine, 'DeepFilterNet3');
      // The native runtime where onnxruntime-node loads (a devDependency here), else WebAssembly.
      assert.equal(speech.noise_reduction?.runtime, nativeRuntime().available ? 'native' : 'wasm');
      assert.equal(speech.noise_reduction?.attenuation_limit_db, null, 'level 100: no cap');
      assert.ok(speech.noise_reduction.noise_floor_reduction_db! > 10, JSON.stringify(speech.noise_reduction));
      assert.equal(typeof speech.leveler?.gain_min_db, 'number');
      // Two threads free, but DeepFilterNet3 runs both channels on one, as one batch of its session.
      assert.equal(speech.channel_threads, 1, 'the two channels ran on one thread');
    } finally {
      await engine.dispose();
    }
  });

  it('FINCH at level 1 leaves the noise almost as it was; level 100 takes it away', async () => {
    const engine = await startTestEngine({ workers: 1 });
    try {
      const light = await enhance(engine, noisyStereo, {
        loudness_target: -20,
        true_peak: -1,
        enhancement_model: 'FINCH',
        enhancement_level: 1,
      });
      const full = await enhance(engine, noisyStereo, {
        loudness_target: -20,
        true_peak: -1,
        enhancement_model: 'FINCH',
        enhancement_level: 100,
      });
      const before = speechOverPauses(noisyLeft);
      const lightGain = speechOverPauses((await readWav(light.out)).channels[0]) - before;
      const fullGain = speechOverPauses((await readWav(full.out)).channels[0]) - before;
      assert.ok(Math.abs(lightGain) < 1, `level 1 changed the noise by ${lightGain.toFixed(1)} dB`);
      assert.ok(fullGain >= 15, `level 100 lowered the noise by ${fullGain.toFixed(1)} dB`);
      assert.equal(full.params.speech_enhancement.noise_reduction?.engine, 'RNNoise');
      assert.equal(full.params.speech_enhancement.noise_reduction?.runtime, 'wasm');
      assert.equal(full.params.speech_enhancement.noise_reduction?.wet_percent, 100);
      assert.equal(full.params.speech_enhancement.leveler, null);
      assert.equal(full.params.speech_enhancement.hum_removal, null);
      assert.equal(full.params.speech_enhancement.channel_threads, 1);
    } finally {
      await engine.dispose();
    }
  });

  it("input loudness in the metadata is the uploaded file's, measured before enhancement", async () => {
    const engine = await startTestEngine();
    try {
      const { params } = await enhance(engine, noisyStereo, { loudness_target: -16, true_peak: -1 });
      const reference = await ffmpegLoudness(noisyPath);
      assert.ok(
        Math.abs(params.input_loudness_lufs! - reference.integratedLufs) <= 0.1,
        `${params.input_loudness_lufs} vs ffmpeg ${reference.integratedLufs}`,
      );
    } finally {
      await engine.dispose();
    }
  });
});
