// The check a chunk's samples pass before they reach a stream's state: float samples must be finite and
// within ±SAMPLE_LIMIT; the first that is not is named by frame and channel. 16-bit samples always pass.
import assert from 'node:assert/strict';
import { findBadSample, SAMPLE_LIMIT } from '../../src/stream/sample-check';
import type { PcmFormat } from '../../src/stream/pcm-format';

const MONO: PcmFormat = { rate: 16000, channels: 1, encoding: 'f32le' };
const STEREO: PcmFormat = { rate: 48000, channels: 2, encoding: 'f32le' };

function floats(values: number[], offset = 0): Buffer {
  const bytes = Buffer.alloc(offset + values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, offset + i * 4));
  return bytes.subarray(offset);
}

describe('sample check', () => {
  it('takes finite float samples up to the limit, past full scale too', () => {
    assert.equal(findBadSample(floats([0, 0.5, -1, 1.5, SAMPLE_LIMIT, -SAMPLE_LIMIT, 1e-40]), MONO), undefined);
    assert.equal(findBadSample(Buffer.alloc(0), MONO), undefined);
  });

  it('names the first NaN, infinite or far too large sample by frame and channel', () => {
    assert.deepEqual(findBadSample(floats([0, 0.1, Number.NaN, Number.POSITIVE_INFINITY]), MONO), {
      frame: 2,
      channel: 1,
      value: Number.NaN,
    });
    assert.deepEqual(findBadSample(floats([0, Number.NEGATIVE_INFINITY]), MONO), {
      frame: 1,
      channel: 1,
      value: Number.NEGATIVE_INFINITY,
    });
    // Integers sent as floats: 16-bit scale is 2048 times full scale.
    assert.deepEqual(findBadSample(floats([0.2, 12000]), MONO), { frame: 1, channel: 1, value: 12000 });
    assert.equal(findBadSample(floats([16.001]), MONO)?.frame, 0);
  });

  it('counts interleaved channels from 1', () => {
    assert.deepEqual(findBadSample(floats([0, 0, 0.1, Number.NaN]), STEREO), {
      frame: 1,
      channel: 2,
      value: Number.NaN,
    });
    assert.deepEqual(findBadSample(floats([0, 0, -99, 0]), STEREO), { frame: 1, channel: 1, value: -99 });
  });

  it('reads a Buffer that starts anywhere in its memory (Node pools small ones)', () => {
    assert.deepEqual(findBadSample(floats([0.1, Number.NaN], 3), MONO), { frame: 1, channel: 1, value: Number.NaN });
  });

  it('passes any 16-bit chunk: its samples are within full scale', () => {
    const extremes = Buffer.from(Int16Array.from([-32768, 32767, 0, -1]).buffer);
    assert.equal(findBadSample(extremes, { rate: 16000, channels: 1, encoding: 's16le' }), undefined);
    // The bytes of a float NaN, read as 16-bit samples, are numbers.
    assert.equal(findBadSample(floats([Number.NaN]), { rate: 16000, channels: 2, encoding: 's16le' }), undefined);
  });
});
