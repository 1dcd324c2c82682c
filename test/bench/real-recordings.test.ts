// The denoiser benchmark's noise making: a short recording wraps round under a longer clip, and babble
// holds every talker at one active level.
import assert from 'node:assert/strict';
import { babble, loop } from '../../bench/real-recordings';
import { activeRms } from '../enhance/test-media';

describe('bench: real-recording noises', () => {
  it('loops a short noise from an offset, wrapping round', () => {
    assert.deepEqual(Array.from(loop(Float32Array.from([1, 2, 3]), 7, 2)), [3, 1, 2, 3, 1, 2, 3]);
  });

  it('sums the talkers at one active level, each from a different point', () => {
    const quiet = Float32Array.from({ length: 1000 }, (_, i) => 0.05 * Math.sin(i / 3));
    const loud = Float32Array.from({ length: 1000 }, (_, i) => 0.5 * Math.sin(i / 5));
    // Each talker alone comes out at the same active level, however loud its recording.
    for (const talker of [quiet, loud]) assert.ok(Math.abs(activeRms(babble([talker], 2000)) - 0.1) < 0.002);
    // The second of two talkers starts halfway through its recording.
    const both = babble([quiet, loud], 10);
    const expected = (0.1 / activeRms(quiet)) * quiet[0] + (0.1 / activeRms(loud)) * loud[500];
    assert.ok(Math.abs(both[0] - expected) < 1e-6);
  });
});
