import assert from 'node:assert/strict';
import { voiceFromEnergy } from '../../src/enhance/energy-voice';

/** Frames (10 ms) of mean square at `db`. */
const frames = (count: number, db: number) => Array.from({ length: count }, () => 10 ** (db / 10));

function voiced(energy: number[]): Float32Array {
  const voice = new Float32Array(energy.length);
  voiceFromEnergy(Float32Array.from(energy), energy.length, voice);
  return voice;
}
const share = (voice: Float32Array, from: number, to: number) =>
  voice.subarray(from, to).reduce((sum, v) => sum + v, 0) / (to - from);

describe('enhance: voice from the denoised energy', () => {
  it('finds speech well above the quiet frames around it, loud and quiet speakers alike', () => {
    // Turns of 2 s at -20 and -40 dB, pauses of 1 s near silence (-90 dB) as the network leaves them.
    const energy = [
      ...frames(100, -90),
      ...frames(200, -20),
      ...frames(100, -90),
      ...frames(200, -40),
      ...frames(100, -90),
    ];
    const voice = voiced(energy);
    assert.equal(share(voice, 110, 290), 1, 'the loud turn');
    assert.equal(share(voice, 410, 590), 1, 'the quiet turn, 20 dB under the loud one');
    for (const [from, to] of [
      [0, 95],
      [305, 395],
      [605, 700],
    ])
      assert.equal(share(voice, from, to), 0, `the pause at frames ${from}-${to}`);
  });

  it('does not take for speech what is little above its surroundings or far under the loud frames', () => {
    const energy = [
      ...frames(200, -20),
      ...frames(100, -90),
      // Left over noise 10 dB over the floor around it: not speech.
      ...frames(50, -80),
      ...frames(100, -90),
      // 40 dB under the loud frames, though well above the floor: a breath, a far sound.
      ...frames(50, -60),
      ...frames(100, -90),
    ];
    const voice = voiced(energy);
    assert.equal(share(voice, 10, 190), 1);
    assert.equal(share(voice, 300, 350), 0, 'noise 10 dB over the floor');
    assert.equal(share(voice, 450, 500), 0, 'a sound 40 dB under the speech');
  });

  it('writes nothing for an empty track and no speech for silence', () => {
    voiceFromEnergy(new Float32Array(0), 0, new Float32Array(0));
    assert.equal(share(voiced(frames(300, -200)), 0, 300), 0);
  });

  it('gives what the straightforward form gives (a sorted copy, the floor as an array of its own), frame for frame', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const cases: Float32Array[] = [];
    // Speech-like energy: turns and pauses of random lengths and levels, with jitter, and runs of equal values.
    for (const length of [1, 2, 3, 150, 301, 302, 303, 5000, 40_000]) {
      const energy = new Float32Array(length);
      for (let k = 0; k < length;) {
        const run = 1 + Math.floor(random() * 400);
        const db = random() < 0.4 ? -90 : -60 + 50 * random();
        for (let end = Math.min(length, k + run); k < end; k++)
          energy[k] = random() < 0.1 ? 10 ** (db / 10) : 10 ** ((db + 3 * (random() - 0.5)) / 10);
      }
      cases.push(energy);
    }
    // Steady speech with a 4 s fade-in from near silence: on a rise the floor's queue of candidates is at
    // its fullest, and there the floor (under the file's quiet tenth) decides.
    cases.push(
      Float32Array.from(
        { length: 5000 },
        (_, k) => 10 ** ((k >= 1000 && k < 1400 ? -100 + 0.2 * (k - 1000) : -40) / 10),
      ),
    );
    for (const energy of cases) {
      const length = energy.length;
      const voice = new Float32Array(length + 3).fill(0.5);
      voiceFromEnergy(energy, length, voice);
      const expected = straightforwardVoice(energy, length);
      for (let k = 0; k < length; k++) assert.equal(voice[k], expected[k], `length ${length}, frame ${k}`);
      assert.deepEqual([...voice.subarray(length)], [0.5, 0.5, 0.5], 'nothing written past the frames');
    }
  });
});

/** voiceFromEnergy as first written: every step an array of the track's length (the reference for the one above). */
function straightforwardVoice(energy: Float32Array, frames: number): Float32Array {
  const levels = new Float32Array(frames);
  for (let k = 0; k < frames; k++) {
    const sum = energy[Math.max(0, k - 1)] + energy[k] + energy[Math.min(frames - 1, k + 1)];
    levels[k] = 10 * Math.log10(sum / 3 + 1e-20);
  }
  const sorted = Float32Array.from(levels).sort();
  const loud = sorted[Math.floor((frames - 1) * 0.95)];
  const fileFloor = sorted[Math.floor((frames - 1) * 0.1)];
  const floor = new Float32Array(frames);
  for (let k = 0; k < frames; k++) {
    let minimum = Infinity;
    for (let j = Math.max(0, k - 150); j <= Math.min(frames - 1, k + 150); j++) minimum = Math.min(minimum, levels[j]);
    floor[k] = minimum;
  }
  return levels.map((level, k) => (level - Math.min(floor[k], fileFloor) >= 18 && level >= loud - 30 ? 1 : 0));
}
