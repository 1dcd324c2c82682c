import assert from 'node:assert/strict';
import { FrameTrack } from '../../src/enhance/frame-track';
import { LevelerGain, MAX_GAIN_DB, planLeveler, TRACK_RATE } from '../../src/enhance/leveler';

/** A voice track: speech turns (seconds, level in dB), each followed by a pause of `pause` seconds at `noiseDb`. */
function turns(list: Array<[number, number]>, pause = 1, noiseDb = -70): FrameTrack {
  const track = new FrameTrack();
  let k = 0;
  for (const [seconds, levelDb] of list) {
    for (let i = 0; i < seconds * TRACK_RATE; i++, k++) track.add(k, 0.95, 10 ** (levelDb / 10), 10 ** (levelDb / 10));
    for (let i = 0; i < pause * TRACK_RATE; i++, k++) track.add(k, 0.02, 10 ** (noiseDb / 10), 10 ** (noiseDb / 10));
  }
  return track;
}

const toDb = (gain: number) => 20 * Math.log10(gain);

describe('enhance: speech leveler', () => {
  it('brings a quiet and a loud speaker (12 dB apart) to within 3 dB of each other', () => {
    const track = turns([
      [5, -30],
      [5, -18],
      [5, -30],
      [5, -18],
    ]);
    const plan = planLeveler(track);
    // The level each turn ends at: its level plus the mean gain over its frames.
    const turnLevel = (start: number, levelDb: number) => {
      let sum = 0;
      for (let k = start; k < start + 5 * TRACK_RATE; k++) sum += toDb(plan.gains[k]);
      return levelDb + sum / (5 * TRACK_RATE);
    };
    const quiet = turnLevel(12 * TRACK_RATE, -30);
    const loud = turnLevel(18 * TRACK_RATE, -18);
    assert.ok(Math.abs(loud - quiet) <= 3, `after the leveler: ${quiet.toFixed(1)} and ${loud.toFixed(1)} dB`);
    assert.ok(plan.maxGainDb > 4 && plan.minGainDb < -4);
  });

  it('never boosts or cuts by more than 12 dB', () => {
    const plan = planLeveler(
      turns([
        [4, -60],
        [4, -10],
        [4, -60],
        [4, -10],
      ]),
    );
    for (const gain of plan.gains) assert.ok(Math.abs(toDb(gain)) <= MAX_GAIN_DB + 1e-3, `gain ${toDb(gain)} dB`);
    assert.ok(plan.maxGainDb > MAX_GAIN_DB - 0.5, 'the range is used up to its bound');
  });

  it('holds the gain in pauses at or below unity: noise in a pause after a quiet speaker is not raised', () => {
    const track = turns(
      [
        [5, -30],
        [5, -18],
        [5, -30],
        [5, -18],
      ],
      2,
    );
    const plan = planLeveler(track);
    let pauseGain = -Infinity;
    for (let k = 0; k < track.frames; k++)
      if (track.voice[k] < 0.5) pauseGain = Math.max(pauseGain, toDb(plan.gains[k]));
    // Only the smoothing's edge reaches a pause: its middle stays at or below 0 dB.
    const middleOfFirstPause = Math.round(6 * TRACK_RATE);
    assert.ok(
      toDb(plan.gains[middleOfFirstPause]) <= 0.01,
      `gain ${toDb(plan.gains[middleOfFirstPause]).toFixed(2)} dB mid-pause`,
    );
    assert.ok(pauseGain < 6, `largest gain in a pause ${pauseGain.toFixed(1)} dB`);
  });

  it('changes the gain smoothly: no step larger than 0.01 dB between two samples at 48 kHz', () => {
    const track = turns(
      [
        [3, -35],
        [3, -15],
        [3, -35],
        [3, -15],
      ],
      0.3,
    );
    const plan = planLeveler(track);
    const gain = new LevelerGain(plan, 48_000);
    const frames = Math.floor((track.frames / TRACK_RATE) * 48_000);
    let previous = NaN;
    let largest = 0;
    for (let at = 0; at < frames; at += 4800) {
      const n = Math.min(4800, frames - at);
      const ones = [new Float32Array(n).fill(1)];
      gain.apply(ones, n);
      for (const value of ones[0]) {
        if (!Number.isNaN(previous)) largest = Math.max(largest, Math.abs(toDb(value) - toDb(previous)));
        previous = value;
      }
    }
    assert.ok(largest < 0.01, `largest step ${largest.toFixed(4)} dB`);
  });

  it('applies no gain when it hears no speech', () => {
    const plan = planLeveler(turns([[0, 0]], 10, -40));
    assert.equal(plan.targetDb, null);
    assert.ok(plan.gains.every((g) => g === 1));
  });
});
