// The hum detector on hum it must find (50 and 60 Hz, drifted, weak fundamental, under speech, stereo,
// a long file) and on what it must not call hum (speech, noise, silence, a steady 100 Hz voice).
import assert from 'node:assert/strict';
import { HumDetector, type HumReport } from '../../src/enhance/hum-detector';
import { readSpeechSample, seededNoise } from './speech-sample';

/** Streams planar audio through a detector in blocks whose arrays are reused, as openWav does. */
function detect(channels: Float32Array[], sampleRate: number, blockFrames = 32_768): HumReport {
  const frames = channels[0].length;
  const detector = new HumDetector(sampleRate, channels.length, frames);
  const block = channels.map(() => new Float32Array(blockFrames));
  for (let at = 0; at < frames; at += blockFrames) {
    const n = Math.min(blockFrames, frames - at);
    block.forEach((samples, c) => samples.set(channels[c].subarray(at, at + n)));
    detector.add(block, n);
  }
  return detector.finish();
}

/** Mains hum: harmonic h at amplitude level * amplitudes[h - 1] (peak), each at its own phase. */
function hum(
  length: number,
  sampleRate: number,
  fundamental: number,
  level: number,
  amplitudes = [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6, 1 / 7, 1 / 8],
): Float32Array {
  const out = new Float32Array(length);
  amplitudes.forEach((amplitude, i) => {
    const w = (2 * Math.PI * fundamental * (i + 1)) / sampleRate;
    for (let n = 0; n < length; n++) out[n] += level * amplitude * Math.sin(w * n + i);
  });
  return out;
}

const add = (a: Float32Array, b: Float32Array) => a.map((x, i) => x + b[i]);
const fromDb = (dbfs: number) => 10 ** (dbfs / 20);

/** The speech sample at 48 kHz by linear interpolation: its images sit far above the hum's band. */
function upsampleBy3(samples: Float32Array): Float32Array {
  return Float32Array.from({ length: samples.length * 3 }, (_, i) => {
    const [at, fraction] = [Math.floor(i / 3), (i % 3) / 3];
    return samples[at] * (1 - fraction) + (samples[at + 1] ?? 0) * fraction;
  });
}

/** Roughly pink (-3 dB/octave from 20 Hz up): white noise through octave-spaced one-pole low-passes. */
function pinkNoise(length: number, sampleRate: number, seed: number, level: number): Float32Array {
  const white = seededNoise(seed);
  const poles = Array.from({ length: 10 }, (_, k) => ({
    a: Math.exp((-2 * Math.PI * 20 * 2 ** k) / sampleRate),
    gain: 2 ** (k / 2),
    y: 0,
  }));
  return Float32Array.from({ length }, () => {
    const x = white();
    return level * poles.reduce((sum, p) => sum + (p.y = p.a * p.y + (1 - p.a) * x) / p.gain, 0);
  });
}

/**
 * A vowel-like voice at a steady pitch (a pulse train through two formant resonators), in syllables of
 * 0.5-1 s with pauses of 0.4-0.8 s, over a faint noise floor: its harmonics sit exactly where hum's would.
 */
function steadyVoice(sampleRate: number, seconds: number, pitch: number, seed: number): Float32Array {
  const random = seededNoise(seed);
  const formants = [
    [700, 80],
    [1200, 100],
  ].map(([frequency, bandwidth]) => ({
    r: Math.exp((-Math.PI * bandwidth) / sampleRate),
    c: 2 * Math.cos((2 * Math.PI * frequency) / sampleRate),
    y1: 0,
    y2: 0,
  }));
  const out = new Float32Array(Math.round(sampleRate * seconds));
  let [phase, left, length, voiced] = [0, 0, 1, false];
  for (let i = 0; i < out.length; i++) {
    if (left <= 0) {
      voiced = !voiced;
      length = left = Math.round(sampleRate * (voiced ? 0.75 : 0.6) + 0.2 * sampleRate * random());
    }
    const envelope = voiced ? Math.sin(Math.PI * (1 - left / length)) ** 2 : 0;
    left--;
    phase += pitch / sampleRate;
    const pulse = phase >= 1 ? ((phase -= 1), 1) : 0;
    let y = 0;
    for (const f of formants) {
      const v = pulse * (1 - f.r) + f.r * f.c * f.y1 - f.r * f.r * f.y2;
      [f.y2, f.y1] = [f.y1, v];
      y += v;
    }
    out[i] = 0.3 * envelope * y + 3e-4 * random();
  }
  return out;
}

function assertHum(report: HumReport, mains: 50 | 60, fundamental: number, harmonics: number[]): void {
  assert.equal(report.mainsHz, mains, JSON.stringify(report));
  const error = report.fundamentalHz! - fundamental;
  assert.ok(Math.abs(error) < 0.1, `fundamental ${report.fundamentalHz} for ${fundamental}`);
  // Close enough for the subtractor's first block (it follows the fundamental from there).
  for (const h of harmonics) {
    const found = report.harmonicsHz.find((f) => Math.abs(f - h * fundamental) < 1);
    assert.ok(found !== undefined, `harmonic ${h} not reported: ${report.harmonicsHz.join(',')}`);
    assert.ok(
      Math.abs(found - h * fundamental) <= Math.max(0.2, 0.0008 * found),
      `harmonic ${h} at ${found} for ${h * fundamental}`,
    );
  }
  assert.ok(report.prominenceDb >= 12);
}

function assertNoHum(report: HumReport): void {
  assert.deepEqual(
    { ...report, prominenceDb: 0 },
    { mainsHz: null, fundamentalHz: null, harmonicsHz: [], prominenceDb: 0 },
  );
}

describe('enhance: hum detector', () => {
  let speech16: Float32Array;
  let speech48: Float32Array;
  before(async () => {
    speech16 = (await readSpeechSample()).samples;
    speech48 = upsampleBy3(speech16);
  });

  for (const fundamental of [50, 49.8]) {
    it(`finds ${fundamental} Hz hum 20 dB under the speech sample (16 kHz), its fundamental and harmonics where the subtraction needs them`, () => {
      const report = detect([add(speech16, hum(speech16.length, 16_000, fundamental, fromDb(-50)))], 16_000);
      assertHum(report, 50, fundamental, [1, 2, 3, 4, 5]);
    });
  }

  it('finds 60.2 Hz hum under the speech sample at 48 kHz, as 60 Hz mains', () => {
    const report = detect([add(speech48, hum(speech48.length, 48_000, 60.2, fromDb(-50)))], 48_000);
    assertHum(report, 60, 60.2, [1, 2, 3, 4, 5]);
  });

  it('finds 60 Hz hum as 60, and in a stereo file whose channels differ (mixed to mono)', () => {
    assertHum(detect([add(speech16, hum(speech16.length, 16_000, 60, fromDb(-50)))], 16_000), 60, 60, [1, 2, 3]);
    const buzz = hum(speech48.length, 48_000, 59.8, fromDb(-50));
    const stereo = [
      add(speech48, buzz),
      add(
        speech48.map((s, i) => 0.5 * (speech48[i + 4800] ?? 0) - 0.1 * s),
        buzz,
      ),
    ];
    assertHum(detect(stereo, 48_000, 10_000), 60, 59.8, [1, 2, 3]);
  });

  it('finds a ground-loop hum whose fundamental is weak and whose 2nd and 3rd harmonics are strong', () => {
    const report = detect(
      [add(speech16, hum(speech16.length, 16_000, 50.1, fromDb(-50), [0.01, 1, 0.7, 0.3]))],
      16_000,
    );
    assertHum(report, 50, 50.1, [2, 3]);
  });

  it('finds hum in a long file from windows spread over it (6 minutes, 60 s of it analysed)', () => {
    const rate = 8000;
    const noise = seededNoise(11);
    const [w1, w2] = [1, 2].map((h) => (2 * Math.PI * 50.05 * h) / rate);
    const samples = Float32Array.from(
      { length: rate * 360 },
      (_, i) => 1e-3 * noise() + 0.003 * Math.sin(w1 * i) + 0.002 * Math.sin(w2 * i + 1),
    );
    assertHum(detect([samples], rate), 50, 50.05, [1, 2]);
  });

  it('does not call clean speech hum (16 and 48 kHz)', () => {
    assertNoHum(detect([speech16], 16_000));
    assertNoHum(detect([speech48], 48_000));
  });

  it('does not call white or pink noise hum, short or long', () => {
    for (const [seconds, seed] of [
      [2, 1],
      [2, 2],
      [10, 3],
      [10, 4],
    ]) {
      const noise = seededNoise(seed);
      assertNoHum(detect([Float32Array.from({ length: 16_000 * seconds }, () => 0.1 * noise())], 16_000));
      assertNoHum(detect([pinkNoise(48_000 * seconds, 48_000, seed, 0.1)], 48_000));
    }
  });

  it('does not call silence hum', () => {
    const report = detect([new Float32Array(48_000 * 5), new Float32Array(48_000 * 5)], 48_000);
    assertNoHum(report);
    assert.equal(report.prominenceDb, 0);
    assertNoHum(detect([new Float32Array(1000)], 48_000));
  });

  for (const rate of [16_000, 48_000]) {
    it(`does not call a steady 100 Hz voice with pauses hum (${rate} Hz), yet finds 50 Hz hum under it`, () => {
      const voice = steadyVoice(rate, 12, 100, 5);
      assertNoHum(detect([voice], rate));
      assertHum(detect([add(voice, hum(voice.length, rate, 50, fromDb(-60)))], rate), 50, 50, [1, 2, 3]);
    });
  }

  it('leaves hum 30 dB under a steady 100 Hz voice at 8 kHz alone: subtracting it would take the voice, not audible hum', () => {
    // As in a clean narrowband recording (codec2's kristoff): a faint 50 Hz line in the pauses, a male
    // voice whose fundamental sits on the hum's 2nd harmonic.
    const voice = steadyVoice(8000, 12, 100, 7);
    const faint = hum(voice.length, 8000, 50, fromDb(-76), [1, 1 / 2, 1 / 4]);
    assertNoHum(detect([add(voice, faint)], 8000));
    // The same hum 10 dB louder (20 dB under the voice) is removed.
    assertHum(
      detect(
        [
          add(
            voice,
            faint.map((s) => s * fromDb(10)),
          ),
        ],
        8000,
      ),
      50,
      50,
      [1, 2],
    );
  });
});
