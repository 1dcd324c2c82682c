// One chunk's work on a stream thread: its bytes decoded, enhanced by the stream, encoded back. The
// benchmark times exactly this.
import type { LiveStream } from './live-stream';
import { decodePcm, encodePcm, type PcmFormat } from './pcm-format';

/** The chunk's output bytes: as many frames as it brought, plus the held tail when it is the last. */
export async function enhanceChunk(
  live: LiveStream,
  bytes: Uint8Array,
  format: PcmFormat,
  end: boolean,
): Promise<Buffer> {
  const input = decodePcm(bytes, format);
  const frames = input[0].length;
  const output = end ? await live.end(input, frames) : await live.push(input, frames);
  return encodePcm(output, output[0].length, format);
}
