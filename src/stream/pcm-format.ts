// Raw PCM as live audio sources send it in messages (node-red-contrib-mic, micropi, sox-utils):
// interleaved little-endian samples, 16-bit integers or 32-bit floats, no header. Decoded into one
// Float32Array per channel (full scale = +/-1.0) and encoded back, 16-bit output clipped to its range.
import { decodeFrames, encodeFrames, type Planar } from '../audio/pcm-codec';
import type { WavFormat } from '../audio/wav-format';

export const ENCODINGS = ['s16le', 'f32le'] as const;
export type PcmEncoding = (typeof ENCODINGS)[number];

export interface PcmFormat {
  /** Samples per second per channel. */
  rate: number;
  channels: number;
  encoding: PcmEncoding;
}

export const STREAM_RATE = { min: 8000, max: 48000 } as const;
export const STREAM_CHANNELS = [1, 2] as const;

/** The common microphone format: what node-red-contrib-mic sends by default. */
export const DEFAULT_FORMAT: PcmFormat = { rate: 16000, channels: 1, encoding: 's16le' };

export function bytesPerFrame(format: PcmFormat): number {
  return format.channels * (format.encoding === 's16le' ? 2 : 4);
}

export function sameFormat(a: PcmFormat, b: PcmFormat): boolean {
  return a.rate === b.rate && a.channels === b.channels && a.encoding === b.encoding;
}

function asWav(format: PcmFormat): WavFormat {
  const float = format.encoding === 'f32le';
  return {
    sampleRate: format.rate,
    channels: format.channels,
    bitsPerSample: float ? 32 : 16,
    encoding: float ? 'float' : 'int',
    channelMask: 0,
    blockAlign: bytesPerFrame(format),
  };
}

/** The chunk's samples, one array per channel. `bytes` holds a whole number of frames. */
export function decodePcm(bytes: Uint8Array, format: PcmFormat): Planar {
  const frames = bytes.length / bytesPerFrame(format);
  // The codec reads through typed arrays, which need an aligned start: Node's pooled Buffers often are not.
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes);
  const out = Array.from({ length: format.channels }, () => new Float32Array(frames));
  decodeFrames(aligned, frames, asWav(format), out);
  return out;
}

/** The samples as bytes of `format`; 16-bit samples are rounded and clipped to their range (no dither). */
export function encodePcm(planar: Planar, frames: number, format: PcmFormat): Buffer {
  const bytes = new Uint8Array(frames * bytesPerFrame(format));
  // encodeFrames puts the values written back into its input: it gets copies.
  const copy = planar.map((channel) => channel.slice(0, frames));
  encodeFrames(copy, frames, asWav(format), bytes, false);
  return Buffer.from(bytes.buffer, 0, bytes.length);
}
