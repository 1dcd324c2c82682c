// What a compressed input may decode to, checked before it is decoded. A few hundred kilobytes of FLAC
// (constant subframes, long blocks, 8 channels at 192 kHz) decode to gigabytes of float WAV in the data
// folder: the shape its headers declare is refused first, and the decode itself is bounded in case they lie.
import { stat } from 'node:fs/promises';
import type { DecodeBounds } from '../../audio/ffmpeg';
import type { AudioShape } from '../../audio/source-encoding';
import { MAX_CHANNELS, SAMPLE_RATE_RANGE } from '../../audio/wav-format';
import { ProcessingError } from './processor';

/** Default bound on a decoded input (32-bit float WAV): 8 GiB, about six hours of 48 kHz stereo. */
export const DEFAULT_MAX_DECODED_BYTES = 8 * 1024 ** 3;
/** Bytes of one decoded sample (ffmpeg decodes to 32-bit float). */
const DECODED_SAMPLE_BYTES = 4;

/** The bytes `shape` decodes to, when its length is known. */
export function decodedBytesOf(shape: AudioShape): number | undefined {
  return shape.durationS === undefined
    ? undefined
    : Math.ceil(shape.durationS * shape.sampleRate) * shape.channels * DECODED_SAMPLE_BYTES;
}

/**
 * Refuses, before any decoding, an input whose first audio stream the engine cannot process (channels,
 * rate) or that declares more audio than `maxDecodedBytes`; returns the bounds the decode runs under.
 * `shape` undefined (ffprobe read none): the bounds alone hold the decode.
 */
export function checkBeforeDecoding(
  shape: AudioShape | undefined,
  format: string,
  maxDecodedBytes: number,
): DecodeBounds {
  const name = format.toUpperCase();
  if (!shape) return { maxBytes: maxDecodedBytes };
  if (shape.channels < 1 || shape.channels > MAX_CHANNELS)
    throw new ProcessingError(
      'INVALID_MEDIA',
      `unsupported ${name}: its audio has ${shape.channels} channels (supported: 1 to ${MAX_CHANNELS})`,
    );
  if (shape.sampleRate < SAMPLE_RATE_RANGE.min || shape.sampleRate > SAMPLE_RATE_RANGE.max)
    throw new ProcessingError(
      'INVALID_MEDIA',
      `unsupported ${name}: sample rate ${shape.sampleRate} Hz (supported: ${SAMPLE_RATE_RANGE.min} to ${SAMPLE_RATE_RANGE.max} Hz)`,
    );
  const bytes = decodedBytesOf(shape);
  if (bytes !== undefined && bytes > maxDecodedBytes)
    throw tooLarge(
      `the ${name} file declares ${shape.durationS!.toFixed(0)} s of ${shape.channels} channels at ${shape.sampleRate} Hz, which decode to ${gib(bytes)}`,
      maxDecodedBytes,
    );
  return decodeBoundsFor(shape, maxDecodedBytes);
}

/** What ffmpeg may write decoding `shape`: `maxBytes`, and the seconds that make them at its rate and channels. */
export function decodeBoundsFor(shape: AudioShape | undefined, maxBytes: number): DecodeBounds {
  if (!shape) return { maxBytes };
  const bytesPerSecond = shape.sampleRate * shape.channels * DECODED_SAMPLE_BYTES;
  return { maxBytes, maxSeconds: Math.floor((maxBytes / bytesPerSecond) * 1000) / 1000 };
}

/** Refuses a decoded file that reached the bounds: its headers understated what it holds. */
export async function checkAfterDecoding(decoded: string, format: string, maxDecodedBytes: number): Promise<void> {
  const { size } = await stat(decoded);
  if (size >= maxDecodedBytes)
    throw tooLarge(`the ${format.toUpperCase()} file decodes to more than its headers declare`, maxDecodedBytes);
}

function tooLarge(what: string, maxDecodedBytes: number): ProcessingError {
  return new ProcessingError(
    'MEDIA_TOO_LARGE',
    `${what}: over the engine's limit of ${gib(maxDecodedBytes)} of decoded audio (maxDecodedBytes); send a shorter file, or fewer channels or a lower rate`,
  );
}

/** A size as the limits' messages give it: GiB from one on, else MiB. */
export function gib(bytes: number): string {
  return bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}
