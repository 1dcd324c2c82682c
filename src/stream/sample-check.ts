// A chunk's samples checked before they reach a stream's state: a float sample that is NaN or infinite
// has no level to denoise (one such sample would turn the denoiser's state, and every later output of
// the stream, into NaN), and one far outside full scale is not audio at this scale (most often integer
// samples sent as floats). 16-bit samples are always within full scale.
import { bytesPerFrame, type PcmFormat } from './pcm-format';

/** The largest magnitude a float sample may have: 24 dB over full scale (±1), room for any real overshoot. */
export const SAMPLE_LIMIT = 16;

export interface BadSample {
  /** From 0, within the chunk. */
  frame: number;
  /** From 1, as people count channels. */
  channel: number;
  value: number;
}

/** The first sample of the chunk that is not finite or lies beyond ±SAMPLE_LIMIT, if any. */
export function findBadSample(bytes: Uint8Array, format: PcmFormat): BadSample | undefined {
  if (format.encoding !== 'f32le') return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const samples = bytes.byteLength / 4;
  for (let i = 0; i < samples; i++) {
    const value = view.getFloat32(i * 4, true);
    // Written so that NaN fails it too.
    if (!(Math.abs(value) <= SAMPLE_LIMIT))
      return { frame: Math.floor((i * 4) / bytesPerFrame(format)), channel: (i % format.channels) + 1, value };
  }
  return undefined;
}
