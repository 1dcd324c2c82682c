// De-reverberation (WPE, src/enhance/dereverberator.ts): the signal passes whole and sample-aligned at no
// strength, block ends included, and real speech in a simulated room (image sources, RT60 0.6 s) comes out
// measurably drier against its direct sound and early reflections.
import assert from 'node:assert/strict';
import { Dereverberator } from '../../src/enhance/dereverberator';
import { siSdr } from '../../bench/quality-metrics';
import { benchRoom, convolve, earlyPart, reverberationTime, roomImpulse } from '../../bench/room-impulse';
import { readSpeechSample, seededNoise } from './speech-sample';

function run(dereverberator: Dereverberator, input: Float32Array, pushFrames: number): Float32Array {
  const out = new Float32Array(input.length + 1);
  let at = 0;
  const take = (part: Float32Array) => {
    assert.ok(at + part.length <= input.length, 'the output never runs ahead of the input');
    out.set(part, at);
    at += part.length;
  };
  for (let i = 0; i < input.length; i += pushFrames) {
    const frames = Math.min(pushFrames, input.length - i);
    take(dereverberator.push(input.subarray(i, i + frames), frames));
  }
  take(dereverberator.flush());
  assert.equal(at, input.length, 'as many samples out as in');
  return out.subarray(0, at);
}

describe('de-reverberation (WPE)', function () {
  this.timeout(120_000);

  it('at strength 0 gives the input back, sample for sample, across block ends', async () => {
    const noise = seededNoise(7);
    // 3.3 s at 16 kHz in blocks of 1 s, pushed in odd-sized pieces: three block ends and a short last block.
    const input = Float32Array.from({ length: 52_813 }, () => 0.3 * noise());
    const out = run(await Dereverberator.create(16_000, 0, 1), input, 3_001);
    let worst = 0;
    for (let i = 0; i < input.length; i++) worst = Math.max(worst, Math.abs(out[i] - input[i]));
    assert.ok(worst < 1e-5, `the largest difference is ${worst}`);
  });

  it('refuses a strength outside 0..1, naming it', async () => {
    await assert.rejects(Dereverberator.create(16_000, 1.5), /strength must be 0\.\.1, not 1\.5/);
  });

  it('makes speech in a room with RT60 0.6 s drier: at least 2 dB more SI-SDR against the early sound', async () => {
    const { samples: speech, sampleRate } = await readSpeechSample();
    const impulse = roomImpulse(benchRoom(0.6), sampleRate);
    const measured = reverberationTime(impulse.samples, sampleRate);
    assert.ok(Math.abs(measured - 0.6) < 0.06, `the room's RT60 measures ${measured.toFixed(2)} s`);
    const reverberant = convolve(speech, impulse.samples);
    const early = convolve(speech, earlyPart(impulse, sampleRate));
    // Blocks of 4 s: the 10.6 s sample crosses block ends, where each block's filter starts.
    const out = run(await Dereverberator.create(sampleRate, 1, 4), reverberant, 32_768);
    const before = siSdr(early, reverberant);
    const after = siSdr(early, out);
    assert.ok(after - before >= 2, `SI-SDR ${before.toFixed(2)} dB before, ${after.toFixed(2)} dB after`);
    // Half strength takes away about half: between the two.
    const half = siSdr(early, run(await Dereverberator.create(sampleRate, 0.5, 4), reverberant, 32_768));
    assert.ok(half > before + 0.5 && half < after - 0.2, `half strength: ${half.toFixed(2)} dB`);
  });
});
