// Whether the data folder has room for what an upload becomes. A compressed file decodes to float WAV
// many times its size (a 21 KB FLAC to 1.2 GB): accepting one the disk cannot hold would fill it for
// every other media. Checked before the upload is accepted: a refusal is a 507 the client retries later.
import { statfs } from 'node:fs/promises';
import { ffprobePathFor, probeAudioShape, type AudioShape } from '../../audio/source-encoding';
import type { EnhancementSettings, OutputSettings } from '../../contract/fields';
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
   * Refuses (507, Retry-After) an upload of `size` bytes, of `type`, whose decoded audio, output and further
   * outputs (as `settings` ask for them) the data folder has no room for. `localPath`: where the upload is,
   * when on this machine (its headers are probed); an upload in remote storage is copied here first, so its
   * own size counts too.
   */
  async check(
    type: MediaType,
    size: number,
    localPath: string | undefined,
    settings: EnhancementSettings = {},
  ): Promise<void> {
    const outputs = settings.outputs ?? [];
    // A WAV is read as it is and, unless transcoded or resampled, kept at its size: only then is its length needed.
    const keptAsItIs =
      outputs.length === 0 && settings.transcode === undefined && settings.sample_rate_hz === undefined;
    const needsShape = type.ext !== 'wav' || !keptAsItIs;
    const shape =
      localPath && needsShape
        ? await probeAudioShape(ffprobePathFor(this.options.ffmpegPath), localPath, type.ext, PROBE_STALL_MS)
        : undefined;
    const decoded = this.decodedBytes(type, size, shape);
    const main = mainOutputBytes(settings, type, size, shape, decoded);
    const further = outputs.reduce((sum, output) => sum + outputBytes(output, type, size, shape, decoded), 0);
    const needed = decoded + main + further + (localPath === undefined ? size : 0);
    const free = await freeBytes(this.options.dataDir);
    if (free === undefined || free >= needed) return;
    const furtherText =
      outputs.length > 0
        ? `, its ${outputs.length === 1 ? 'further output' : `${outputs.length} further outputs`} ${mebibytes(further)}`
        : '';
    throw new HttpError(
      507,
      `the service has no room for this file now: it decodes to ${mebibytes(decoded)}, its output takes ${mebibytes(main)}${furtherText}, and the service has ${mebibytes(free)} free; retry later`,
      { 'retry-after': String(NO_ROOM_RETRY_AFTER_S), connection: 'close' },
    );
  }

  /**
   * What decoding writes: a WAV's own size (it is read as it is); else what its headers declare, at most
   * the bound (the decode stops there). A file that declares no length counts its own size: the bound holds it.
   */
  private decodedBytes(type: MediaType, size: number, shape: AudioShape | undefined): number {
    if (type.ext === 'wav') return size;
    const declared = shape ? decodedBytesOf(shape) : undefined;
    return Math.min(declared ?? size, this.options.maxDecodedBytes);
  }
}

/** The most a lossy output is counted at when no bitrate is chosen (kb/s): MP3's highest. */
const MOST_LOSSY_KBPS = 320;
/** A WAV output of a compressed input is written in 24-bit samples. */
const WAV_OUTPUT_SAMPLE_BYTES = 3;

/**
 * The bytes a further output is expected to take: a WAV from its rate, channels and 24-bit samples over the
 * input's length (a WAV input's own format: its size, at the rate asked); an encoded one from its bitrate
 * (an audio input's own encoding kept: its size; none chosen for a transcode or a video's soundtrack: 320
 * kb/s). Without a length the headers declare: the decoded bound for a WAV, the input's size for the rest.
 */
export function outputBytes(
  output: OutputSettings,
  type: MediaType,
  size: number,
  shape: AudioShape | undefined,
  decoded: number,
): number {
  const seconds = shape?.durationS;
  const wav = output.transcode === 'WAV' || (output.transcode === undefined && type.ext === 'wav');
  if (wav) {
    if (!shape || seconds === undefined) return decoded;
    const rate = output.sample_rate_hz ?? shape.sampleRate;
    if (type.ext === 'wav') return Math.ceil(size * (rate / shape.sampleRate));
    return Math.ceil(seconds * rate) * shape.channels * WAV_OUTPUT_SAMPLE_BYTES;
  }
  const keepsOwnEncoding = output.transcode === undefined && type.kind === 'audio';
  if (output.bitrate_kbps === undefined && keepsOwnEncoding) return size;
  if (seconds === undefined) return size;
  return Math.ceil(((output.bitrate_kbps ?? MOST_LOSSY_KBPS) * 1000 * seconds) / 8);
}

/**
 * The bytes the job's own output (the ENHANCED file) is expected to take: a video's own size (its picture is
 * copied); else as a further output of the job's transcode and encoding (outputBytes).
 */
export function mainOutputBytes(
  settings: EnhancementSettings,
  type: MediaType,
  size: number,
  shape: AudioShape | undefined,
  decoded: number,
): number {
  if (type.kind === 'video') return size;
  const { transcode, bitrate_kbps, sample_rate_hz } = settings;
  return outputBytes({ name: 'enhanced', transcode, bitrate_kbps, sample_rate_hz }, type, size, shape, decoded);
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
