// Interleaved little-endian sample bytes <-> one Float32Array per channel (full scale = +/-1.0).
import type { WavFormat } from './wav-format';

/** Planar audio: one array per channel, all the same length. */
export type Planar = Float32Array[];

/** `bytes` must start at a frame boundary of a buffer whose byteOffset is a multiple of 8. */
export function decodeFrames(bytes: Uint8Array, frames: number, format: WavFormat, out: Planar): void {
  const { channels, bitsPerSample, encoding } = format;
  const n = frames * channels;
  if (encoding === 'float') {
    const source =
      bitsPerSample === 32
        ? new Float32Array(bytes.buffer, bytes.byteOffset, n)
        : new Float64Array(bytes.buffer, bytes.byteOffset, n);
    deinterleave(source, frames, channels, 1, out);
  } else if (bitsPerSample === 16) {
    deinterleave(new Int16Array(bytes.buffer, bytes.byteOffset, n), frames, channels, 1 / 32768, out);
  } else if (bitsPerSample === 32) {
    deinterleave(new Int32Array(bytes.buffer, bytes.byteOffset, n), frames, channels, 1 / 2147483648, out);
  } else if (bitsPerSample === 24) {
    for (let c = 0; c < channels; c++) {
      const channel = out[c];
      for (let i = 0, p = c * 3; i < frames; i++, p += channels * 3) {
        // Shift the 24 bits to the top of an int32 and back: sign extension in one step.
        channel[i] = (((bytes[p] | (bytes[p + 1] << 8) | (bytes[p + 2] << 16)) << 8) >> 8) / 8388608;
      }
    }
  } else {
    for (let c = 0; c < channels; c++) {
      const channel = out[c];
      for (let i = 0, p = c; i < frames; i++, p += channels) channel[i] = (bytes[p] - 128) / 128; // 8-bit WAV is unsigned
    }
  }
}

function deinterleave(source: ArrayLike<number>, frames: number, channels: number, scale: number, out: Planar): void {
  for (let c = 0; c < channels; c++) {
    const channel = out[c];
    for (let i = 0, p = c; i < frames; i++, p += channels) channel[i] = source[p] * scale;
  }
}

/**
 * Writes `frames` frames of `input` as `format` into `bytes`, and puts back into `input` the values the
 * file will hold (after rounding, dither and clipping), so a meter fed `input` measures the file itself.
 * `dither` adds triangular (TPDF) noise of +/-1 LSB before rounding: it turns the rounding error of a
 * gain change into steady noise instead of distortion, which matters at 16 bits and below.
 */
export function encodeFrames(
  input: Planar,
  frames: number,
  format: WavFormat,
  bytes: Uint8Array,
  dither: boolean,
): void {
  const { channels, bitsPerSample, encoding } = format;
  const n = frames * channels;
  if (encoding === 'float') {
    const target =
      bitsPerSample === 32
        ? new Float32Array(bytes.buffer, bytes.byteOffset, n)
        : new Float64Array(bytes.buffer, bytes.byteOffset, n);
    for (let c = 0; c < channels; c++) {
      const channel = input[c];
      for (let i = 0, p = c; i < frames; i++, p += channels) target[p] = channel[i];
    }
    return;
  }
  const full = 2 ** (bitsPerSample - 1);
  const max = full - 1;
  const view = new DataView(bytes.buffer, bytes.byteOffset, n * (bitsPerSample / 8));
  const bytesPerSample = bitsPerSample / 8;
  for (let c = 0; c < channels; c++) {
    const channel = input[c];
    for (let i = 0, p = c; i < frames; i++, p += channels) {
      let q = Math.round(channel[i] * full + (dither ? Math.random() - Math.random() : 0));
      if (q > max) q = max;
      else if (q < -full) q = -full;
      channel[i] = q / full;
      const at = p * bytesPerSample;
      if (bitsPerSample === 16) view.setInt16(at, q, true);
      else if (bitsPerSample === 24) {
        bytes[at] = q & 0xff;
        bytes[at + 1] = (q >> 8) & 0xff;
        bytes[at + 2] = (q >> 16) & 0xff;
      } else if (bitsPerSample === 32) view.setInt32(at, q, true);
      else bytes[at] = q + 128;
    }
  }
}

export function allocatePlanar(channels: number, frames: number): Planar {
  return Array.from({ length: channels }, () => new Float32Array(frames));
}
