// What joining an intro and an outro may decode: the engine's decode limits (engine/processors/decode-limits.ts)
// applied to the join. A part is decoded at the episode's rate and channels, so what it declares is counted
// at that shape, and the parts together too (the joined file holds them all): refused before anything is
// decoded, each decode bounded in case its headers lie and checked after. A 1.3 MB FLAC declaring two
// hours of silence would otherwise write gigabytes beside the output.
import { stat } from 'node:fs/promises';
import { decodeToWav, type DecodeBounds } from '../audio/ffmpeg';
import { ffprobePathFor, probeAudioShape } from '../audio/source-encoding';
import { checkBeforeDecoding, decodeBoundsFor, decodedBytesOf, gib } from '../engine/processors/decode-limits';
import { ProcessingError } from '../engine/processors/processor';
import type { MediaType } from '../engine/storage/media-type';

/** A file the join decodes: the episode (when not WAV), the intro or the outro. */
export interface JoinDecode {
  /** How an error names it: "the intro (jingle.flac)". */
  what: string;
  path: string;
  type: MediaType;
}

type Shape = { sampleRate: number; channels: number };

/**
 * Each file's bounds (in the order given), after refusing one that declares more decoded audio than
 * `maxDecodedBytes` at `shape` (the episode's; its own when undefined), alone or with those before it and
 * `alreadyBytes` (the episode's samples, as the joined file holds them).
 */
export async function checkJoinDecodes(
  ffmpegPath: string,
  files: JoinDecode[],
  shape: Shape | undefined,
  maxDecodedBytes: number,
  alreadyBytes = 0,
): Promise<DecodeBounds[]> {
  if (alreadyBytes > maxDecodedBytes)
    throw new ProcessingError(
      'MEDIA_TOO_LARGE',
      `the episode alone holds ${gib(alreadyBytes)} of decoded audio: over the limit of ${gib(maxDecodedBytes)} (maxDecodedBytes)`,
    );
  let total = alreadyBytes;
  const bounds: DecodeBounds[] = [];
  for (const file of files) {
    const declared = await probeAudioShape(ffprobePathFor(ffmpegPath), file.path, file.type.ext);
    const decoded = declared && { ...declared, ...shape };
    await named(file, () => checkBeforeDecoding(decoded, file.type.ext, maxDecodedBytes));
    const bytes = (decoded && decodedBytesOf(decoded)) ?? 0;
    if (total + bytes > maxDecodedBytes)
      throw new ProcessingError(
        'MEDIA_TOO_LARGE',
        `${file.what} declares ${gib(bytes)} of decoded audio at the episode's ${decoded!.sampleRate} Hz and ${decoded!.channels} channels, and with the rest of the episode ${gib(total + bytes)}: over the limit of ${gib(maxDecodedBytes)} (maxDecodedBytes); use a shorter intro or outro`,
      );
    // A part whose headers lie may decode only what the episode and the parts before it left of the limit.
    bounds.push(decodeBoundsFor(decoded, maxDecodedBytes - total));
    total += bytes;
  }
  return bounds;
}

/** `file` decoded into `output` (at `shape` when given) within `bounds`; refused when it reached them. */
export async function decodeWithin(
  ffmpegPath: string,
  file: JoinDecode,
  output: string,
  bounds: DecodeBounds,
  maxDecodedBytes: number,
  shape?: Shape,
): Promise<void> {
  await decodeToWav(ffmpegPath, file.path, file.type.ext, output, bounds, shape);
  const { size } = await stat(output);
  if (size >= (bounds.maxBytes ?? maxDecodedBytes))
    throw new ProcessingError(
      'MEDIA_TOO_LARGE',
      `${file.what} decodes to more than its headers declare: with the rest of the episode over the limit of ${gib(maxDecodedBytes)} of decoded audio (maxDecodedBytes)`,
    );
}

/** The engine's limits speak of "the FLAC file"; the join's errors say which file. */
async function named<T>(file: JoinDecode, check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    if (!(err instanceof ProcessingError)) throw err;
    throw new ProcessingError(err.code, `${file.what}: ${err.message}`);
  }
}
