// The benchmark's intelligibility measures on cases with known answers: the speech itself scores 1,
// noise alone is unintelligible to ESTOI, more noise never scores higher, a gain changes nothing, and
// one noisy case matches the published reference implementation (pystoi) to four decimals.
import assert from 'node:assert/strict';
import { resamplePoly } from '../../bench/resample-poly';
import { estoi, stoi } from '../../bench/stoi';
import { readSpeechSample, seededNoise } from '../enhance/speech-sample';
import { mix } from '../enhance/test-media';

describe('bench: STOI and ESTOI', () => {
  let speech: Float32Array;
  let rate: number;
  let noise: Float32Array;
  before(async () => {
    ({ samples: speech, sampleRate: rate } = await readSpeechSample());
    noise = Float32Array.from({ length: speech.length }, seededNoise(5));
  });

  it('scores the clean speech against itself 1', () => {
    assert.ok(Math.abs(stoi(speech, speech, rate) - 1) < 1e-9);
    assert.ok(Math.abs(estoi(speech, speech, rate) - 1) < 1e-9);
  });

  it('matches pystoi on the speech sample with white noise at 0 dB', () => {
    // pystoi (github.com/mpariente/pystoi, commit 74872b0), stoi(x, y, 16000) and extended=True, on these arrays.
    const noisy = mix(speech, noise, 0);
    assert.ok(Math.abs(stoi(speech, noisy, rate) - 0.798532) < 1e-4, `STOI ${stoi(speech, noisy, rate)}`);
    assert.ok(Math.abs(estoi(speech, noisy, rate) - 0.521378) < 1e-4, `ESTOI ${estoi(speech, noisy, rate)}`);
  });

  it('gives independent noise an ESTOI near 0 and a STOI below any noisy speech', () => {
    // STOI's clipping lets the clipped noise envelope follow the speech's where the speech is low, so
    // noise alone does not score 0 under STOI (0.41 here, pystoi agrees); ESTOI has no clipping.
    assert.ok(Math.abs(estoi(speech, noise, rate)) < 0.05, `ESTOI ${estoi(speech, noise, rate)}`);
    assert.ok(stoi(speech, noise, rate) < stoi(speech, mix(speech, noise, -10), rate));
  });

  it('rises with the SNR', () => {
    // The first 4 s of the sample are enough here (about 300 segments).
    const clean = speech.subarray(0, 4 * rate);
    const noisy = (snr: number) => mix(clean, noise.subarray(0, clean.length), snr);
    const snrs = [-10, -5, 0, 5, 10, 20];
    const stois = snrs.map((snr) => stoi(clean, noisy(snr), rate));
    const estois = snrs.map((snr) => estoi(clean, noisy(snr), rate));
    for (let i = 1; i < snrs.length; i++) {
      assert.ok(stois[i] > stois[i - 1], `STOI ${stois.join(', ')}`);
      assert.ok(estois[i] > estois[i - 1], `ESTOI ${estois.join(', ')}`);
    }
  });

  it('is blind to the processed signal`s gain and to the input rate', () => {
    const clean = speech.subarray(0, 4 * rate);
    const noisy = mix(clean, noise.subarray(0, clean.length), 5);
    const louder = noisy.map((s) => s * 4);
    assert.ok(Math.abs(stoi(clean, louder, rate) - stoi(clean, noisy, rate)) < 1e-9);
    assert.ok(Math.abs(estoi(clean, louder, rate) - estoi(clean, noisy, rate)) < 1e-9);
    // The same signals at 48 kHz score within 0.01 (both are brought to 10 kHz first).
    const at48 = (s: Float32Array) => resamplePoly(s, rate, 48_000);
    assert.ok(Math.abs(stoi(at48(clean), at48(noisy), 48_000) - stoi(clean, noisy, rate)) < 0.01);
  });

  it('refuses signals of different lengths, naming both', () => {
    assert.throws(() => stoi(speech, speech.subarray(1), rate), /same length, got \d+ and \d+/);
  });
});

describe('bench: polyphase resampling', () => {
  it('keeps a tone in band at its level and phase, and removes one above the new Nyquist', () => {
    const tone = (hz: number, rate: number, length: number) =>
      Float32Array.from({ length }, (_, i) => Math.sin((2 * Math.PI * hz * i) / rate));
    const kept = resamplePoly(tone(1000, 48_000, 48_000), 48_000, 10_000);
    assert.equal(kept.length, 10_000);
    const expected = tone(1000, 10_000, 10_000);
    let error = 0;
    for (let i = 2000; i < 8000; i++) error = Math.max(error, Math.abs(kept[i] - expected[i]));
    assert.ok(error < 0.01, `largest difference ${error}`);
    const removed = resamplePoly(tone(7000, 48_000, 48_000), 48_000, 10_000);
    let peak = 0;
    for (let i = 2000; i < 8000; i++) peak = Math.max(peak, Math.abs(removed[i]));
    assert.ok(peak < 0.002, `7 kHz left at ${peak}`);
  });
});
