// Segmental SI-SDR on cases with known answers: an exact copy hits the ceiling, noise at a set SNR in
// every window reads that SNR, and a slow gain change (a leveler's) costs it nothing while it costs
// whole-file SI-SDR a lot.
import assert from 'node:assert/strict';
import { segmentalSiSdr, siSdr } from '../../bench/quality-metrics';
import { readSpeechSample, seededNoise } from '../enhance/speech-sample';

describe('bench: segmental SI-SDR', () => {
  let speech: Float32Array;
  let rate: number;
  before(async () => {
    ({ samples: speech, sampleRate: rate } = await readSpeechSample());
  });

  it('scores an exact copy at its 60 dB ceiling, and a scaled copy too', () => {
    assert.equal(segmentalSiSdr(speech, speech, rate), 60);
    assert.equal(
      segmentalSiSdr(
        speech,
        speech.map((s) => s * 0.3),
        rate,
      ),
      60,
    );
  });

  it('reads the SNR of noise set window by window', () => {
    // White noise scaled in each 0.5 s window to 10 dB under that window's speech: every window scores 10 dB
    // (a little less: SI-SDR projects the noise's tiny correlation with the speech onto the target).
    const window = rate / 2;
    const next = seededNoise(3);
    const noisy = Float32Array.from(speech);
    for (let at = 0; at + window <= speech.length; at += window) {
      const noise = Float32Array.from({ length: window }, next);
      const energy = (v: Float32Array) => v.reduce((sum, s) => sum + s * s, 0);
      const scale = Math.sqrt(energy(speech.subarray(at, at + window)) / energy(noise) / 10);
      for (let i = 0; i < window; i++) noisy[at + i] += scale * noise[i];
    }
    const score = segmentalSiSdr(speech, noisy, rate);
    assert.ok(Math.abs(score - 10) < 0.3, `segmental SI-SDR ${score}`);
  });

  it('is blind to a slow gain change that whole-file SI-SDR punishes', () => {
    // ±6 dB over 10 s: at most 1.9 dB of change within a window.
    const riding = speech.map((s, i) => s * 10 ** ((6 * Math.sin((2 * Math.PI * i) / (10 * rate))) / 20));
    const segmental = segmentalSiSdr(speech, riding, rate);
    const whole = siSdr(speech, riding);
    assert.ok(segmental > 25, `segmental SI-SDR ${segmental}`);
    assert.ok(whole < 10, `SI-SDR ${whole}`);
  });
});
