// The hum subtractor on its own: hum taken out (steady, off the detector's estimate, wandering), the
// voice and everything between the harmonics left as they were, sample for sample; streamed in any
// blocks with the same result; short inputs and digital silence.
import assert from 'node:assert/strict';
import { HumSubtractor } from '../../src/enhance/hum-subtractor';
import { db, readSpeechSample, rms } from './speech-sample';

/** Mains hum whose fundamental is `fundamentalAt(seconds)`: harmonics 1..10, odd ones stronger. */
function wanderingHum(length: number, rate: number, fundamentalAt: (seconds: number) => number): Float32Array {
  const out = new Float32Array(length);
  let phase = 0;
  for (let n = 0; n < length; n++) {
    phase += (2 * Math.PI * fundamentalAt(n / rate)) / rate;
    for (let h = 1; h <= 10; h++) out[n] += (0.1 * (h % 2 ? 1 : 0.5) * Math.sin(h * phase + h)) / h;
  }
  return out;
}

const report = (fundamentalHz: number, harmonics = 10) => ({
  fundamentalHz,
  harmonicsHz: Array.from({ length: harmonics }, (_, i) => (i + 1) * fundamentalHz),
});

/** The whole input through a subtractor, pushed in blocks of uneven sizes. */
function subtract(input: Float32Array, subtractor: HumSubtractor, firstBlock = 1000): Float32Array {
  const output = new Float32Array(input.length);
  let written = 0;
  const take = (part: Float32Array) => {
    output.set(part, written);
    written += part.length;
  };
  for (let at = 0, n = firstBlock; at < input.length; at += n, n = 500 + ((n * 7 + 333) % 9000))
    take(subtractor.push(input.subarray(at, at + n), Math.min(n, input.length - at)));
  take(subtractor.flush());
  assert.equal(written, input.length, 'as many samples out as in');
  return output;
}

/** How far `output` lies from `wanted` (dB against `wanted`), from `fromSeconds` on. */
function errorDb(output: Float32Array, wanted: Float32Array, rate: number, fromSeconds = 0): number {
  const from = Math.round(fromSeconds * rate);
  const error = output.map((v, i) => v - wanted[i]);
  return db(rms(error, from) / rms(wanted, from));
}

describe('enhance: hum subtractor', () => {
  for (const [rate, fundamental] of [
    [16_000, 50.02],
    [48_000, 59.97],
  ]) {
    it(`at ${rate} Hz, ${fundamental} Hz hum alone: >= 40 dB down from the first block on`, () => {
      const humOnly = wanderingHum(6 * rate, rate, () => fundamental);
      const output = subtract(humOnly, new HumSubtractor(rate, report(fundamental)));
      const left = db(rms(output) / rms(humOnly));
      assert.ok(left <= -40, `${left.toFixed(1)} dB left`);
    });
  }

  it('follows a fundamental off the estimate (50.2 Hz hum reported at 50 Hz) and one wandering +/-0.1 Hz over 20 s', () => {
    const rate = 16_000;
    const off = wanderingHum(8 * rate, rate, () => 50.2);
    const offLeft = db(rms(subtract(off, new HumSubtractor(rate, report(50))), 2 * rate) / rms(off, 2 * rate));
    assert.ok(offLeft <= -40, `off the estimate: ${offLeft.toFixed(1)} dB left after the first block`);
    const wandering = wanderingHum(30 * rate, rate, (t) => 50 + 0.1 * Math.sin((2 * Math.PI * t) / 20));
    const wanderLeft = db(rms(subtract(wandering, new HumSubtractor(rate, report(50)))) / rms(wandering));
    assert.ok(wanderLeft <= -30, `wandering: ${wanderLeft.toFixed(1)} dB left`);
  });

  it('keeps tones between the harmonics to the sample, in magnitude and phase (75, 137, 1000 Hz under 50 Hz hum)', () => {
    const rate = 16_000;
    const length = 5 * rate;
    const tones = Float32Array.from({ length }, (_, n) =>
      [75, 137, 1000].reduce((sum, hz) => sum + 0.1 * Math.sin((2 * Math.PI * hz * n) / rate), 0),
    );
    const humming = wanderingHum(length, rate, () => 50).map((v, i) => v + tones[i]);
    const error = errorDb(subtract(humming, new HumSubtractor(rate, report(50))), tones, rate);
    assert.ok(error <= -45, `tones kept within ${error.toFixed(1)} dB`);
  });

  it('takes hum at the speech level out of real speech and keeps the voice (>= 20 dB over what is left of the hum and what was taken from it)', async () => {
    const { samples: speech, sampleRate } = await readSpeechSample();
    const humming = wanderingHum(speech.length, sampleRate, () => 50.01);
    const level = rms(speech) / rms(humming);
    const input = speech.map((v, i) => v + level * humming[i]);
    const error = errorDb(subtract(input, new HumSubtractor(sampleRate, report(50))), speech, sampleRate);
    assert.ok(error <= -20, `speech kept within ${error.toFixed(1)} dB (the input: 0 dB)`);
  });

  it('gives the same samples whatever blocks it is pushed in', () => {
    const rate = 16_000;
    const input = wanderingHum(7 * rate + 123, rate, (t) => 50 + 0.05 * t).map((v, n) => v + 0.05 * Math.sin(n / 3));
    const one = new HumSubtractor(rate, report(50));
    const whole = Float32Array.from(one.push(input, input.length));
    const all = new Float32Array(input.length);
    all.set(whole);
    all.set(one.flush(), whole.length);
    assert.deepEqual(subtract(input, new HumSubtractor(rate, report(50)), 77), all);
  });

  it('fits an input shorter than a block as a whole, leaves one under half a block as it is, and passes everything through without harmonics', () => {
    const rate = 16_000;
    const short = wanderingHum(Math.round(1.2 * rate), rate, () => 50);
    const shortLeft = db(rms(subtract(short, new HumSubtractor(rate, report(50)))) / rms(short));
    assert.ok(shortLeft <= -40, `1.2 s: ${shortLeft.toFixed(1)} dB left`);
    const tiny = wanderingHum(Math.round(0.4 * rate), rate, () => 50);
    assert.deepEqual(subtract(tiny, new HumSubtractor(rate, report(50))), tiny);
    const speechLike = Float32Array.from({ length: 3 * rate }, (_, n) => Math.sin(n / 7) * Math.sin(n / 1000));
    assert.deepEqual(
      subtract(speechLike, new HumSubtractor(rate, { fundamentalHz: null, harmonicsHz: [] })),
      speechLike,
    );
  });

  it('adds no hum to digital silence inside a humming file, to its edges (60 Hz at 16 kHz, silence from mid-period)', () => {
    const rate = 16_000;
    const input = wanderingHum(6 * rate, rate, () => 60);
    const [from, to] = [2 * rate + 101, 3 * rate + 57];
    input.fill(0, from, to);
    const output = subtract(input, new HumSubtractor(rate, report(60)));
    assert.ok(
      output.subarray(from, to).every((v) => v === 0),
      'the silence stays silent',
    );
    const left = db(rms(output, 4 * rate) / rms(input, 4 * rate));
    assert.ok(left <= -40, `after the silence: ${left.toFixed(1)} dB left`);
  });
});
