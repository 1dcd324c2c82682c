import assert from 'node:assert/strict';
import { StreamResampler } from '../../src/enhance/resampler';
import { db, rms } from './speech-sample';

/** Streams `input` through a resampler in uneven blocks, as the chain does. */
async function resample(input: Float32Array, from: number, to: number): Promise<Float32Array> {
  const resampler = await StreamResampler.create(from, to);
  const parts: Float32Array[] = [];
  try {
    for (let at = 0, n = 1; at < input.length; at += n, n = (n * 7 + 1000) % 5000) {
      parts.push(resampler.push(input.subarray(at, at + n), Math.min(n, input.length - at)).slice());
    }
    parts.push(resampler.flush().slice());
  } finally {
    resampler.destroy();
  }
  const out = new Float32Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function tones(sampleRate: number, seconds: number, frequencies: number[]): Float32Array {
  const out = new Float32Array(Math.round(sampleRate * seconds));
  for (let i = 0; i < out.length; i++) {
    for (const f of frequencies)
      out[i] += (0.25 / frequencies.length) * Math.sin((2 * Math.PI * f * i) / sampleRate + f);
  }
  return out;
}

describe('enhance: band-limited resampler (Speex)', () => {
  for (const [from, to] of [
    [44_100, 48_000],
    [16_000, 48_000],
    [48_000, 22_050],
  ]) {
    it(`${from} Hz -> ${to} Hz gives round(N * ratio) samples, in step with the input (no delay)`, async () => {
      const input = tones(from, 2, [440, 1000]);
      const output = await resample(input, from, to);
      assert.equal(output.length, Math.round((input.length * to) / from));
      // The same tones computed at the new rate: any delay or gain error shows as a difference.
      const expected = tones(to, 2, [440, 1000]);
      const edge = Math.round(to * 0.01); // the first and last 10 ms meet the file's edges
      const error = new Float32Array(output.length - 2 * edge);
      for (let i = 0; i < error.length; i++) error[i] = output[i + edge] - expected[i + edge];
      const errorDb = db(rms(error) / rms(expected, edge, expected.length - edge));
      assert.ok(errorDb < -50, `difference from the ideal ${errorDb.toFixed(1)} dB`);
    });
  }

  it('a 44.1 kHz -> 48 kHz -> 44.1 kHz round trip of speech-band content stays within -50 dB', async () => {
    const input = tones(44_100, 2, [150, 700, 2500, 7000, 15000]);
    const back = await resample(await resample(input, 44_100, 48_000), 48_000, 44_100);
    assert.equal(back.length, input.length);
    const edge = 441;
    const error = new Float32Array(input.length - 2 * edge);
    for (let i = 0; i < error.length; i++) error[i] = back[i + edge] - input[i + edge];
    const errorDb = db(rms(error) / rms(input, edge, input.length - edge));
    assert.ok(errorDb < -50, `round-trip error ${errorDb.toFixed(1)} dB`);
  });
});
