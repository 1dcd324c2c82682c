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
});
