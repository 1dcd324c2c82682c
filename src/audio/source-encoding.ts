// How the input's first audio stream is encoded, read with ffprobe (beside ffmpeg) and, for MP3, from
// the header of its first frame: what an output has to match to keep the input's encoding.
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { runChild } from './child-runs';
import { inputArgs, type MediaFormat } from './ffmpeg';

export interface SourceEncoding {
  /** ffprobe's codec name: `mp3`, `aac`, `vorbis`, `opus`, `flac`, `pcm_s16le`... */
  codec: string;
  sampleRate: number;
  channels: number;
  /** Bits per second: the stream's own figure (a Vorbis file's nominal one), else the file's average. */
  bitRate?: number;
  /** ffprobe's sample format (`s16`, `s32`, `fltp`), for a lossless codec's bit depth. */
  sampleFormat?: string;
  bitsPerRawSample?: number;
  /** MP3: constant or variable bitrate, from its Xing/Info/VBRI header (none: CBR). */
  mode?: 'CBR' | 'VBR';
  /** MP3 made by LAME in VBR: the -V level (0..9) its LAME tag records. */
  lameVbrLevel?: number;
}

/** ffprobe beside the engine's ffmpeg: `/opt/ff/bin/ffmpeg` -> `/opt/ff/bin/ffprobe`, `ffmpeg` -> `ffprobe`. */
export function ffprobePathFor(ffmpegPath: string): string {
  const name = basename(ffmpegPath);
  const probe = name.includes('ffmpeg') ? name.replace('ffmpeg', 'ffprobe') : 'ffprobe';
  return name === ffmpegPath ? probe : join(dirname(ffmpegPath), probe);
}

interface ProbeJson {
  streams?: {
    codec_name?: string;
    sample_rate?: string;
    channels?: number;
    bit_rate?: string;
    sample_fmt?: string;
    bits_per_raw_sample?: string;
  }[];
  format?: { bit_rate?: string };
}

/**
 * The encoding of `path`'s first audio stream; undefined when ffprobe is missing or reads no audio
 * stream (the output then takes the encoder's defaults; decoding reports a damaged file by itself).
 * `wholeFileIsAudio`: the file's average bitrate may stand for the stream's (not in a video).
 */
export async function probeSourceEncoding(
  ffprobePath: string,
  path: string,
  format: MediaFormat,
  wholeFileIsAudio: boolean,
): Promise<SourceEncoding | undefined> {
  const entries = 'stream=codec_name,sample_rate,channels,bit_rate,sample_fmt,bits_per_raw_sample:format=bit_rate';
  const json = await probe(ffprobePath, path, format, undefined, [
    '-select_streams',
    'a:0',
    '-show_entries',
    entries,
    '-of',
    'json',
  ])
    .then((stdout) => JSON.parse(stdout) as ProbeJson)
    .catch(() => undefined);
  const stream = json?.streams?.[0];
  if (!stream?.codec_name || !stream.sample_rate || !stream.channels) return undefined;
  const number = (text: string | undefined) => (text && /^\d+$/.test(text) ? Number(text) : undefined);
  const source: SourceEncoding = {
    codec: stream.codec_name,
    sampleRate: Number(stream.sample_rate),
    channels: stream.channels,
    bitRate: number(stream.bit_rate) ?? (wholeFileIsAudio ? number(json?.format?.bit_rate) : undefined),
    sampleFormat: stream.sample_fmt,
    bitsPerRawSample: number(stream.bits_per_raw_sample),
  };
  if (source.codec === 'mp3' && wholeFileIsAudio) Object.assign(source, await readMp3Header(path));
  return source;
}

/** What decoding a file's first audio stream will make: its channels, rate and (when the file says) length. */
export interface AudioShape {
  channels: number;
  sampleRate: number;
  /** Seconds, from the stream or else the container; undefined when neither says. */
  durationS?: number;
}

/**
 * The shape of `path`'s first audio stream as its headers declare it, read without decoding it (ffprobe
 * reads headers, not samples); undefined when ffprobe is missing or finds no audio stream.
 */
export async function probeAudioShape(
  ffprobePath: string,
  path: string,
  format: MediaFormat,
  /** A bound of its own (see runChild); else the thread's. */
  stallMs?: number,
): Promise<AudioShape | undefined> {
  const json = await probe(ffprobePath, path, format, stallMs, [
    '-select_streams',
    'a:0',
    '-show_entries',
    'stream=channels,sample_rate,duration:format=duration',
    '-of',
    'json',
  ])
    .then(
      (stdout) =>
        JSON.parse(stdout) as {
          streams?: { channels?: number; sample_rate?: string; duration?: string }[];
          format?: { duration?: string };
        },
    )
    .catch(() => undefined);
  const stream = json?.streams?.[0];
  const sampleRate = Number(stream?.sample_rate);
  if (!stream || typeof stream.channels !== 'number' || !Number.isFinite(sampleRate)) return undefined;
  const seconds = [stream.duration, json?.format?.duration]
    .map(Number)
    .find((value) => Number.isFinite(value) && value >= 0);
  return { channels: stream.channels, sampleRate, ...(seconds !== undefined ? { durationS: seconds } : {}) };
}

/** The type of each stream of `path` in order (`video`, `audio`, `subtitle`, `data`, `attachment`); undefined without ffprobe. */
export function probeStreamTypes(
  ffprobePath: string,
  path: string,
  format: MediaFormat,
): Promise<string[] | undefined> {
  // JSON, not CSV: a stream's side data (an E-AC-3 soundtrack's, a phone video's rotation) adds fields to its CSV line.
  return probe(ffprobePath, path, format, undefined, ['-show_entries', 'stream=codec_type', '-of', 'json']).then(
    (stdout) => {
      const streams = (JSON.parse(stdout) as { streams?: { codec_type?: string }[] }).streams;
      return streams?.map((stream) => stream.codec_type ?? 'unknown');
    },
    () => undefined,
  );
}

/** ffprobe's answer about `path`, opened as `format` only (see inputArgs), within the engine's time bound. */
async function probe(
  ffprobePath: string,
  path: string,
  format: MediaFormat,
  stallMs: number | undefined,
  args: string[],
): Promise<string> {
  const { stdout } = await runChild(ffprobePath, ['-v', 'error', ...args, ...inputArgs(path, format)], {
    ...(stallMs !== undefined ? { stallMs } : {}),
  });
  return stdout.toString('utf8');
}

/** How far into an MP3 (after its ID3v2 tag) its first frame, and a Xing header in it, can be. */
const FIRST_FRAME_BYTES = 4096;

/**
 * An MP3's bitrate mode from the header in its first frame: `Xing` or `VBRI` is variable, `Info` (or
 * none) constant. LAME records its VBR quality in the Xing header: 100 - 10 x V - q.
 */
async function readMp3Header(path: string): Promise<Pick<SourceEncoding, 'mode' | 'lameVbrLevel'>> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(10);
    await file.read(head, 0, 10, 0);
    // ID3v2: a syncsafe size (7 bits a byte) after the 10-byte header, plus a 10-byte footer when flagged.
    const tagBytes =
      head.toString('latin1', 0, 3) === 'ID3'
        ? 10 + ((head[6] << 21) | (head[7] << 14) | (head[8] << 7) | head[9]) + (head[5] & 0x10 ? 10 : 0)
        : 0;
    const frame = Buffer.alloc(FIRST_FRAME_BYTES);
    const { bytesRead } = await file.read(frame, 0, FIRST_FRAME_BYTES, tagBytes);
    const bytes = frame.subarray(0, bytesRead);
    if (bytes.indexOf('VBRI') >= 0 && bytes.indexOf('VBRI') < 64) return { mode: 'VBR' };
    const xing = bytes.indexOf('Xing');
    if (xing < 0) return { mode: 'CBR' };
    const flags = bytes.readUInt32BE(xing + 4);
    // The quality field follows the frame count, the byte count and the table of contents, each when flagged.
    const at = xing + 8 + (flags & 1 ? 4 : 0) + (flags & 2 ? 4 : 0) + (flags & 4 ? 100 : 0);
    const madeByLame = bytes.toString('latin1', at + 4, at + 8) === 'LAME';
    const quality = flags & 8 && at + 4 <= bytes.length ? bytes.readUInt32BE(at) : 0;
    const level = madeByLame && quality > 0 && quality <= 100 ? Math.floor((100 - quality) / 10) : undefined;
    return { mode: 'VBR', ...(level !== undefined && level <= 9 ? { lameVbrLevel: level } : {}) };
  } finally {
    await file.close();
  }
}
