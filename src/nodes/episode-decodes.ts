// What joining an intro and an outro may decode: the engine's decode limits (engine/processors/decode-limits.ts)
// applied to the join. A part is decoded at the episode's rate and channels, so what it declares is counted
// at that shape, and the parts together too (the joined file holds them all): refused before anything is
// decoded, each decode bounded in case its headers lie and checked after. A 1.3 MB FLAC declaring two
// hours of silence would otherwise write gigabytes beside the output.
import { decodeToWav, type DecodeBounds } from '../audio/ffmpeg';
import { ffprobePathFor, probeAudioShape } from '../audio/source-encoding';
import { checkAfterDecoding, checkBeforeDecoding, decodedBytesOf, gib } from '../engine/processors/decode-limits';
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
  let total = alreadyBytes;
  const bounds: DecodeBounds[] = [];
  for (const file of files) {
    const declared = await probeAudioShape(ffprobePathFor(ffmpegPath), file.path, file.type.ext);
    const decoded = declared && { ...declared, ...shape };
    bounds.push(await named(file, () => checkBeforeDecoding(decoded, file.type.ext, maxDecodedBytes)));
    total += (decoded && decodedBytesOf(decoded)) ?? 0;
    if (total > maxDecodedBytes)
      throw new ProcessingError(
        'MEDIA_TOO_LARGE',
        `${file.what} and the rest of the episode declare ${gib(total)} of decoded audio at the episode's ${decoded!.sampleRate} Hz and ${decoded!.channels} channels: over the limit of ${gib(maxDecodedBytes)} (maxDecodedBytes); use a shorter intro or outro`,
      );
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
  await named(file, () => checkAfterDecoding(output, file.type.ext, maxDecodedBytes));
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
