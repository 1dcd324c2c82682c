// The chain's filters as designed (magnitudeAt) and as they run (a sine through process, its RMS after
// the transient): the rumble high-pass.
import assert from 'node:assert/strict';
import { FilterCascade, highPass, lowPass } from '../../src/enhance/biquad';
import { db, rms } from './speech-sample';

function sine(sampleRate: number, frequency: number, seconds: number): Float32Array {
  return Float32Array.from(
    { length: Math.round(sampleRate * seconds) },
    (_, i) => 0.5 * Math.sin((2 * Math.PI * frequency * i) / sampleRate),
  );
}

/** The gain a cascade gives a sine (dB), measured on its last second, streamed in uneven blocks. */
function measuredGainDb(cascade: FilterCascade, sampleRate: number, frequency: number, seconds: number): number {
  const input = sine(sampleRate, frequency, seconds);
  const output = input.slice();
  for (let at = 0, n = 1000; at < output.length; at += n, n = 500 + ((n * 7 + 333) % 8000))
    cascade.process(output.subarray(at, at + n), Math.min(n, output.length - at));
  return db(rms(output, output.length - sampleRate) / rms(input, input.length - sampleRate));
}

const designDb = (cascade: FilterCascade, frequency: number) => db(cascade.magnitudeAt(frequency));

describe('enhance: filters', () => {
  describe('4th-order Butterworth high-pass at 80 Hz', () => {
    for (const rate of [16_000, 48_000]) {
      it(`at ${rate} Hz: -3 dB at the corner, >= 20 dB down at 20 Hz, within 0.1 dB from 300 Hz up (designed and measured)`, () => {
        const checks: Array<[number, (gainDb: number) => boolean]> = [
          [80, (g) => Math.abs(g + 3.01) < 0.05],
          [20, (g) => g <= -20],
          [300, (g) => Math.abs(g) <= 0.1],
          [1000, (g) => Math.abs(g) <= 0.1],
          [0.45 * rate, (g) => Math.abs(g) <= 0.1],
        ];
        for (const [frequency, ok] of checks) {
          const designed = designDb(highPass(rate, 80, 4), frequency);
          const measured = measuredGainDb(highPass(rate, 80, 4), rate, frequency, 2);
          assert.ok(ok(designed), `${frequency} Hz designed ${designed.toFixed(3)} dB`);
          assert.ok(ok(measured), `${frequency} Hz measured ${measured.toFixed(3)} dB`);
          assert.ok(
            Math.abs(measured - designed) < 0.02,
            `${frequency} Hz: measured ${measured.toFixed(3)} vs designed ${designed.toFixed(3)}`,
          );
        }
        assert.equal(highPass(rate, 80, 4).sections.length, 2);
      });
    }

    it('refuses odd orders (two sections of the right Q make the 4th order)', () => {
      assert.throws(() => highPass(48_000, 80, 3), RangeError);
    });
  });

  it('the low-pass (the hum detector anti-alias filter) is -3 dB at its corner and flat well below it', () => {
    const filter = lowPass(48_000, 800, 4);
    assert.ok(Math.abs(designDb(filter, 800) + 3.01) < 0.05);
    assert.ok(Math.abs(designDb(filter, 300)) < 0.01);
    assert.ok(designDb(filter, 2400) < -37);
  });
});
