// Whether the data folder has room for what an upload becomes. A compressed file decodes to float WAV
// many times its size (a 21 KB FLAC to 1.2 GB): accepting one the disk cannot hold would fill it for
// every other media. Checked before the upload is accepted: a refusal is a 507 the client retries later.
import { statfs } from 'node:fs/promises';
import { ffprobePathFor, probeAudioShape } from '../../audio/source-encoding';
import { HttpError } from './http-error';
import { decodedBytesOf } from '../processors/decode-limits';
import type { MediaType } from '../storage/media-type';

/**
 * Longest the probe of an upload may take: the client waits for its answer meanwhile. Reading headers
 * takes milliseconds; a probe that takes longer counts the file's own size (the decode is bounded anyway).
 */
const PROBE_STALL_MS = 5_000;

/** How long a client should wait before sending an upload again that found no room. */
const NO_ROOM_RETRY_AFTER_S = 60;

export interface DecodedRoomOptions {
  /** The folder work files are written to (the data folder). */
  dataDir: string;
  ffmpegPath: string;
  maxDecodedBytes: number;
}

export class DecodedRoom {
  constructor(private readonly options: DecodedRoomOptions) {}

  /**
   * Refuses (507, Retry-After) an upload of `size` bytes, of `type`, whose decoded audio the data folder has
   * no room for. `localPath`: where the upload is, when on this machine (its headers are probed); an upload
   * in remote storage is copied here first, so its own size counts too.
   */
  async check(type: MediaType, size: number, localPath: string | undefined): Promise<void> {
    const decoded = await this.decodedBytes(type, size, localPath);
    const needed = decoded + (localPath === undefined ? size : 0);
    const free = await freeBytes(this.options.dataDir);
    if (free === undefined || free >= needed) return;
    throw new HttpError(
      507,
      `the service has no room for this file now: it decodes to ${mebibytes(decoded)} and the service has ${mebibytes(free)} free; retry later`,
      { 'retry-after': String(NO_ROOM_RETRY_AFTER_S), connection: 'close' },
    );
  }

  /**
   * What decoding writes: a WAV's own size (it is read as it is); else what its headers declare, at most
   * the bound (the decode stops there). A file that declares no length counts its own size: the bound holds it.
   */
  private async decodedBytes(type: MediaType, size: number, localPath: string | undefined): Promise<number> {
    if (type.ext === 'wav') return size;
    const shape = localPath
      ? await probeAudioShape(ffprobePathFor(this.options.ffmpegPath), localPath, type.ext, PROBE_STALL_MS)
      : undefined;
    const declared = shape ? decodedBytesOf(shape) : undefined;
    return Math.min(declared ?? size, this.options.maxDecodedBytes);
  }
}

async function freeBytes(dir: string): Promise<number | undefined> {
  try {
    const stats = await statfs(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined; // a file system that says nothing: the writes themselves will tell
  }
}

const mebibytes = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
