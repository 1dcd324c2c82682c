// The chain's filters as designed (magnitudeAt) and as they run (a sine through process, its RMS after
// the transient): the rumble high-pass and the hum notches.
import assert from 'node:assert/strict';
import { FilterCascade, highPass, lowPass, notch } from '../../src/enhance/biquad';
import type { HumReport } from '../../src/enhance/hum-detector';
import { humNotches, stopHalfWidthHz } from '../../src/enhance/hum-filter';
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

  it('the RBJ notch is exactly as wide as asked between its -3 dB points, at any rate and centre', () => {
    for (const [rate, centre, bandwidth] of [
      [48_000, 50, 1.8],
      [16_000, 250, 3],
      [44_100, 3000, 40],
    ]) {
      const section = notch(rate, centre, bandwidth);
      const edge = (direction: number) => {
        let [inside, outside] = [centre, centre + direction * bandwidth * 4];
        for (let i = 0; i < 60; i++) {
          const middle = (inside + outside) / 2;
          if (section.magnitudeAt(middle) < Math.SQRT1_2) inside = middle;
          else outside = middle;
        }
        return inside;
      };
      const width = edge(1) - edge(-1);
      assert.ok(Math.abs(width / bandwidth - 1) < 0.001, `${centre} Hz at ${rate}: ${width} Hz wide`);
      assert.ok(section.magnitudeAt(centre) < 1e-6);
    }
  });

  describe('hum notches', () => {
    const report = (fundamentalHz: number, harmonics: number): HumReport => ({
      mainsHz: fundamentalHz < 55 ? 50 : 60,
      fundamentalHz,
      harmonicsHz: Array.from({ length: harmonics }, (_, i) => (i + 1) * fundamentalHz),
      prominenceDb: 30,
    });

    for (const [rate, fundamental] of [
      [16_000, 50.1],
      [48_000, 59.9],
    ]) {
      it(`at ${rate} Hz, ${fundamental} Hz hum: each harmonic >= 30 dB down on a real sine, also +/- the stop half-width off`, () => {
        const hum = report(fundamental, 10);
        for (const harmonic of hum.harmonicsHz) {
          const halfWidth = stopHalfWidthHz(harmonic);
          for (const frequency of [harmonic - halfWidth, harmonic, harmonic + halfWidth]) {
            const depth = -measuredGainDb(humNotches(rate, hum), rate, frequency, 2.5);
            assert.ok(depth >= 30, `${frequency.toFixed(2)} Hz: ${depth.toFixed(1)} dB down`);
            assert.ok(-designDb(humNotches(rate, hum), frequency) >= 30);
          }
        }
      });

      it(`at ${rate} Hz: flat within 0.5 dB between the notches (sines) and everywhere 20 stop half-widths from one (design), up to Nyquist`, () => {
        const hum = report(fundamental, 10);
        for (let h = 1; h <= 10; h++) {
          const between = (h + 0.5) * fundamental;
          const gain = measuredGainDb(humNotches(rate, hum), rate, between, 1.5);
          assert.ok(Math.abs(gain) <= 0.5, `${between.toFixed(1)} Hz: ${gain.toFixed(3)} dB`);
        }
        for (const frequency of [1000, 3000, 0.45 * rate])
          assert.ok(Math.abs(measuredGainDb(humNotches(rate, hum), rate, frequency, 2)) <= 0.05);
        const cascade = humNotches(rate, hum);
        for (let frequency = 1; frequency < rate / 2; frequency += frequency < 1000 ? 0.05 : 5) {
          if (hum.harmonicsHz.some((h) => Math.abs(frequency - h) < 20 * stopHalfWidthHz(h))) continue;
          const gain = designDb(cascade, frequency);
          assert.ok(Math.abs(gain) <= 0.5, `${frequency.toFixed(2)} Hz: ${gain.toFixed(3)} dB`);
        }
      });
    }

    it('puts no notch at or near Nyquist', () => {
      const cascade = humNotches(8000, {
        mainsHz: 50,
        fundamentalHz: 50,
        harmonicsHz: [50, 3999, 4000, 4100],
        prominenceDb: 30,
      });
      assert.equal(cascade.sections.length, 2);
    });

    it('keeps a state per channel: two channels filtered side by side come out as each alone', () => {
      const hum = report(50, 4);
      const left = sine(48_000, 50, 1);
      const right = sine(48_000, 137, 1);
      const alone = [left.slice(), right.slice()];
      alone.forEach((samples) => humNotches(48_000, hum).process(samples, samples.length));
      const filters = [humNotches(48_000, hum), humNotches(48_000, hum)];
      const together = [left.slice(), right.slice()];
      for (let at = 0; at < left.length; at += 4096) {
        together.forEach((samples, c) =>
          filters[c].process(samples.subarray(at, at + 4096), Math.min(4096, left.length - at)),
        );
      }
      assert.deepEqual(together, alone);
    });
  });
});
