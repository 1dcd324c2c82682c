// One chunk's work on a stream thread, or a group's (chunks of one stream that waited together, run as
// one push: the same output, for less work): the bytes decoded, enhanced by the stream, encoded back per
// chunk. The benchmark times exactly this.
import type { Planar } from '../audio/pcm-codec';
import type { LiveStream } from './live-stream';
import { decodePcm, encodePcm, type PcmFormat } from './pcm-format';

/** The chunk's output bytes: as many frames as it brought, plus the held tail when it is the last. */
export async function enhanceChunk(
  live: LiveStream,
  bytes: Uint8Array,
  format: PcmFormat,
  end: boolean,
): Promise<Buffer> {
  return (await enhanceChunks(live, [bytes], format, end))[0];
}

/** Each chunk's output bytes, in order; `end`: the last chunk is the stream's last (its output carries the tail). */
export async function enhanceChunks(
  live: LiveStream,
  chunks: Uint8Array[],
  format: PcmFormat,
  end: boolean,
): Promise<Buffer[]> {
  const decoded = chunks.map((bytes) => decodePcm(bytes, format));
  const lengths = decoded.map((planar) => planar[0].length);
  const input = chunks.length === 1 ? decoded[0] : joinPlanar(decoded, format.channels);
  const frames = input[0].length;
  const output = end ? await live.end(input, frames) : await live.push(input, frames);
  let at = 0;
  return lengths.map((length, i) => {
    // The last chunk takes the rest: the tail, after the stream's end.
    const to = i === lengths.length - 1 ? output[0].length : at + length;
    const part = output.map((channel) => channel.subarray(at, to));
    at = to;
    return encodePcm(part, part[0].length, format);
  });
}

function joinPlanar(parts: Planar[], channels: number): Planar {
  const frames = parts.reduce((sum, planar) => sum + planar[0].length, 0);
  return Array.from({ length: channels }, (_, c) => {
    const channel = new Float32Array(frames);
    let at = 0;
    for (const planar of parts) {
      channel.set(planar[c], at);
      at += planar[c].length;
    }
    return channel;
  });
}
