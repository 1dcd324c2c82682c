import assert from 'node:assert/strict';
import { ChannelDenoiser } from '../../src/enhance/channel-denoiser';
import { FrameTrack } from '../../src/enhance/frame-track';
import { loadRnnoise, RNNOISE_FRAME } from '../../src/enhance/rnnoise';
import { bestLag, db, readSpeechSample, rms, seededNoise } from './speech-sample';

/** The speech sample with white noise 20 dB under it, at 16 kHz (so both resamplers run). */
async function noisySpeech(): Promise<{ noisy: Float32Array; sampleRate: number }> {
  const { samples, sampleRate } = await readSpeechSample();
  const noise = seededNoise(7);
  const level = rms(samples) * 0.1 * Math.sqrt(3);
  return { noisy: samples.map((s) => s + level * noise()), sampleRate };
}

async function denoise(
  input: Float32Array,
  sampleRate: number,
  wet: number,
  track = new FrameTrack(),
): Promise<Float32Array> {
  const denoiser = await ChannelDenoiser.create(await loadRnnoise(), sampleRate, wet, track);
  const out = new Float32Array(input.length);
  let at = 0;
  try {
    const block = 4096;
    for (let i = 0; i < input.length; i += block) {
      const part = denoiser.push(input.slice(i, i + block), Math.min(block, input.length - i));
      out.set(part, at);
      at += part.length;
    }
    const tail = denoiser.flush();
    out.set(tail, at);
    at += tail.length;
  } finally {
    denoiser.destroy();
  }
  assert.equal(at, input.length, 'as many samples out as in');
  return out;
}

describe('enhance: RNNoise noise reduction of one channel', function () {
  this.timeout(60_000);

  it('48 kHz with no noise reduction (level 0) gives the input back sample for sample', async () => {
    const input = new Float32Array(48_000).map((_, i) => 0.3 * Math.sin(i / 7) * Math.sin(i / 3000));
    const output = await denoise(input, 48_000, 0);
    for (let i = 0; i < input.length; i++)
      assert.ok(Math.abs(output[i] - input[i]) < 1e-7, `sample ${i}: ${output[i]} vs ${input[i]}`);
  });

  it("compensates RNNoise's frame of latency: the denoised speech is in step with the input, to the sample", async () => {
    const { noisy, sampleRate } = await noisySpeech();
    const output = await denoise(noisy, sampleRate, 1);
    assert.equal(bestLag(noisy, output, RNNOISE_FRAME), 0);
  });

  it('mixes the denoised and the original signal sample-aligned: level 50 is the mean of 0 and 100, level 1 is almost the input', async () => {
    const { noisy, sampleRate } = await noisySpeech();
    const [dry, half, full, one] = await Promise.all([0, 0.5, 1, 0.01].map((wet) => denoise(noisy, sampleRate, wet)));
    const error = half.map((value, i) => value - (dry[i] + full[i]) / 2);
    assert.ok(db(rms(error) / rms(half)) < -80, 'level 50 is not the sample-aligned mean');
    // No comb filter: the original passes the mix in step and at its level (only the resamplers'
    // band edge near 8 kHz, where this white noise reaches, differs).
    const dryError = dry.map((value, i) => value - noisy[i]);
    const dryErrorDb = db(rms(dryError) / rms(noisy));
    assert.ok(dryErrorDb < -25, `level 0 differs from the input by ${dryErrorDb.toFixed(1)} dB`);
    const oneError = one.map((value, i) => value - (0.99 * dry[i] + 0.01 * full[i]));
    assert.ok(db(rms(oneError) / rms(one)) < -80);
  });

  it('lowers the noise where the speech pauses, keeps the speech, and reports the noise floor it lowered', async () => {
    const { noisy, sampleRate } = await noisySpeech();
    const { samples: clean } = await readSpeechSample();
    const track = new FrameTrack();
    const output = await denoise(noisy, sampleRate, 1, track);
    // Pauses: the 10 ms frames where the clean sample is silent.
    const frame = sampleRate / 100;
    let before = 0;
    let after = 0;
    for (let at = 0; at + frame <= clean.length; at += frame) {
      if (rms(clean, at, at + frame) < 1e-4) {
        before += rms(noisy, at, at + frame) ** 2;
        after += rms(output, at, at + frame) ** 2;
      }
    }
    const measured = 10 * Math.log10(before / after);
    assert.ok(measured > 12, `noise in pauses lowered by ${measured.toFixed(1)} dB`);
    const reported = track.noiseFloorReductionDb()!;
    assert.ok(
      Math.abs(reported - measured) < 4,
      `reported ${reported.toFixed(1)} dB, measured ${measured.toFixed(1)} dB`,
    );
    // Speech kept: the output stays within 3 dB of the clean speech's level.
    assert.ok(
      Math.abs(db(rms(output) / rms(clean))) < 3,
      `speech level changed by ${db(rms(output) / rms(clean)).toFixed(1)} dB`,
    );
    // The voice track: one frame per 10 ms, speech heard in most of them but not in all.
    assert.equal(track.frames, Math.ceil((noisy.length * 3) / RNNOISE_FRAME));
    const voiced = Array.from(track.voice.subarray(0, track.frames)).filter((v) => v > 0.5).length;
    assert.ok(
      voiced > track.frames * 0.3 && voiced < track.frames * 0.95,
      `${voiced} of ${track.frames} frames are voiced`,
    );
  });
});
