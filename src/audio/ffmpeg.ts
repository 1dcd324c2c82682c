// ffmpeg for what is not WAV: decoding any accepted format to WAV, encoding the result back, and
// putting a processed soundtrack back into a video with the picture copied as it was.
import { basename, isAbsolute } from 'node:path';
import { ChildRunError, runChild } from './child-runs';
import { diskFull } from './write-fully';

/** ffmpeg is not installed (or not where the engine was told). */
export class FfmpegMissingError extends Error {
  readonly code = 'FFMPEG_REQUIRED';
}

/** ffmpeg ran and failed; the message carries its own last words. */
export class FfmpegError extends Error {
  readonly code = 'DECODE_FAILED';
}

/** The file has no audio stream to process. */
export class NoAudioStreamError extends Error {
  readonly code = 'NO_AUDIO';
}

export type AudioContainer = 'mp3' | 'flac' | 'ogg' | 'm4a' | 'aiff' | 'wav';
export type VideoContainer = 'mp4' | 'mov' | 'mkv';
/** What a file was recognised as by its first bytes (storage/media-type.ts). */
export type MediaFormat = AudioContainer | VideoContainer;

/** ffmpeg's demuxer for each format the engine accepts. */
const DEMUXERS: Record<MediaFormat, string> = {
  mp3: 'mp3',
  flac: 'flac',
  ogg: 'ogg',
  m4a: 'mov',
  aiff: 'aiff',
  wav: 'wav',
  mp4: 'mov',
  mov: 'mov',
  mkv: 'matroska',
};

/**
 * The arguments that open `path` as `format` and nothing else. Left to guess, ffmpeg's prober looks past
 * what the first bytes say (an ID3 tag, then an HLS playlist) and may pick a demuxer that opens other
 * files named inside: a user's upload must never make the engine read files of its own.
 */
export function inputArgs(path: string, format: MediaFormat): string[] {
  return ['-f', DEMUXERS[format], '-i', path];
}

const available = new Map<string, Promise<boolean>>();

export function ffmpegAvailable(ffmpegPath: string): Promise<boolean> {
  let answer = available.get(ffmpegPath);
  if (!answer) {
    answer = runChild(ffmpegPath, ['-hide_banner', '-version']).then(
      () => true,
      () => false,
    );
    available.set(ffmpegPath, answer);
  }
  return answer;
}

/** Bounds on what a decode may write: past them ffmpeg stops, and the caller finds the file at its bound. */
export interface DecodeBounds {
  /** `-fs`: no more bytes are written once the file is this long (it ends a little over). */
  maxBytes?: number;
  /** `-t`: no more than this many seconds of audio. */
  maxSeconds?: number;
}

/** The first audio stream of `input` (a file of `format`), as a 32-bit float WAV (RF64 when it needs to be). */
export async function decodeToWav(
  ffmpegPath: string,
  input: string,
  format: MediaFormat,
  output: string,
  bounds: DecodeBounds = {},
  /** Resampled and mixed to this rate and channel count (an intro joined to an episode); default: the input's. */
  shape?: { sampleRate: number; channels: number },
  /** Told the seconds of audio decoded so far, as ffmpeg goes. */
  onTime?: (seconds: number) => void,
): Promise<void> {
  await run(
    ffmpegPath,
    [
      ...inputArgs(input, format),
      '-map',
      '0:a:0',
      '-vn',
      '-c:a',
      'pcm_f32le',
      ...(shape ? ['-ar', String(shape.sampleRate), '-ac', String(shape.channels)] : []),
      ...(bounds.maxSeconds !== undefined ? ['-t', String(bounds.maxSeconds)] : []),
      ...(bounds.maxBytes !== undefined ? ['-fs', String(bounds.maxBytes)] : []),
      '-rf64',
      'auto',
      '-f',
      'wav',
      output,
    ],
    onTime,
  );
}

/**
 * `wav` encoded into `container` with `encoder`'s arguments (output-encoding.ts), carrying over what
 * `original` (the user's file) holds besides its audio: its tags (the file's and its audio stream's),
 * its chapters and its attached pictures (cover art). Ogg takes the tags only: ffmpeg 5.1 writes no
 * picture and no chapter into Ogg.
 */
export async function encodeAudio(
  ffmpegPath: string,
  wav: string,
  output: string,
  container: AudioContainer,
  encoder: string[],
  /**
   * `chapters`: an FFMETADATA file (chapters.ts) whose chapters replace the original's, for audio that
   * moved. `pictures: false`: its pictures are not carried over (a video's soundtrack alone: its picture
   * is no cover).
   */
  original: { path: string; format: MediaFormat; chapters?: string; pictures?: false },
  /** Told the seconds of audio encoded so far, as ffmpeg goes. */
  onTime?: (seconds: number) => void,
): Promise<void> {
  const pictures =
    container === 'ogg' || original.pictures === false
      ? []
      : ['-map', '1:v?', '-c:v', 'copy', '-disposition:v', 'attached_pic'];
  const chapters = original.chapters ? ['-f', 'ffmetadata', '-i', original.chapters] : [];
  await run(
    ffmpegPath,
    [
      ...inputArgs(wav, 'wav'),
      ...inputArgs(original.path, original.format),
      ...chapters,
      ...['-map', '0:a', ...pictures],
      ...['-map_metadata', '1', '-map_metadata:s:a:0', '1:s:a:0', '-map_chapters', original.chapters ? '2' : '1'],
      ...encoder,
      ...['-f', container === 'm4a' ? 'ipod' : container, output],
    ],
    onTime,
  );
}

/**
 * A stretch of `wav` (from `fromSeconds`, `seconds` long) encoded as the whole file will be, with 50 ms
 * fades at both ends: what the encoder does to the loudness and the peaks, learnt from a part of the work.
 * The fades keep the cut ends from reading as peaks of their own.
 */
export async function encodeExcerpt(
  ffmpegPath: string,
  wav: string,
  output: string,
  container: AudioContainer,
  encoder: string[],
  stretch: { fromSeconds: number; seconds: number },
): Promise<void> {
  const { fromSeconds, seconds } = stretch;
  const fades = `afade=t=in:d=0.05,afade=t=out:st=${(seconds - 0.05).toFixed(3)}:d=0.05`;
  await run(ffmpegPath, [
    ...['-ss', fromSeconds.toFixed(3), '-t', seconds.toFixed(3)],
    ...inputArgs(wav, 'wav'),
    ...['-map', '0:a', '-af', fades, '-map_metadata', '-1'],
    ...encoder,
    ...['-f', container === 'm4a' ? 'ipod' : container, output],
  ]);
}

/**
 * `video` with its first soundtrack replaced by `wav`: every other stream (picture, further soundtracks,
 * subtitles, attachments) in its place, the file's and each stream's tags and the chapters copied untouched.
 */
export async function replaceSoundtrack(
  ffmpegPath: string,
  video: string,
  wav: string,
  output: string,
  container: VideoContainer,
  encoder: string[],
  /** The video's stream types in order (ffprobe's codec_type); unknown: its pictures and subtitles only. */
  streamTypes: string[] | undefined,
  /** Told the seconds of the video written so far, as ffmpeg goes. */
  onTime?: (seconds: number) => void,
): Promise<void> {
  const format = container === 'mkv' ? 'matroska' : container;
  // Data streams (timecodes) often cannot be copied into a new file: they are left out.
  const written = (streamTypes ?? []).map((type, index) => ({ type, index })).filter(({ type }) => type !== 'data');
  const firstAudio = written.findIndex(({ type }) => type === 'audio');
  const streams = streamTypes
    ? written.flatMap(({ index }, out) => ['-map', out === firstAudio ? '1:a:0' : `0:${index}`])
    : ['-map', '0:v', '-map', '0:s?', '-map', '1:a:0'];
  // Each stream keeps its own tags (language, title), the new soundtrack those of the one it replaces.
  const streamTags = written.flatMap(({ index }, out) => [`-map_metadata:s:${out}`, `0:s:${index}`]);
  const newTrack = streamTypes ? String(firstAudio) : 'a:0';
  await run(
    ffmpegPath,
    [
      ...inputArgs(video, container), // a video keeps its own container
      ...inputArgs(wav, 'wav'),
      ...[...streams, '-c', 'copy'],
      // The encoder's arguments for the new soundtrack alone: the other streams are copied.
      ...encoder.map((arg) => (/^-(c|b|q):a$|^-(ar|ac)$/.test(arg) ? `${arg.replace(/:a$/, '')}:${newTrack}` : arg)),
      ...['-map_metadata', '0', ...streamTags, '-map_chapters', '0'],
      ...['-f', format, output],
    ],
    onTime,
  );
}

/** ffmpeg names its files by the paths it was given: each becomes its last part ("input"), as a media's error may say. */
function withoutPaths(text: string, args: string[]): string {
  let result = text;
  for (const arg of args) if (isAbsolute(arg)) result = result.split(arg).join(basename(arg));
  return result;
}

async function run(ffmpegPath: string, args: string[], onTime?: (seconds: number) => void): Promise<void> {
  // `-progress` on standard output lets the time bound count from the last progress, not the start.
  const all = ['-nostdin', '-hide_banner', '-v', 'error', '-progress', 'pipe:1', '-y', ...args];
  try {
    await runChild(ffmpegPath, all, { progress: true, maxBuffer: 4 << 20, onTime });
  } catch (err) {
    if (!(err instanceof ChildRunError)) throw err;
    if (err.code === 'ENOENT') throw new FfmpegMissingError(`ffmpeg was not found at "${ffmpegPath}"`);
    const said = withoutPaths(err.stderr, args).trim().split('\n').filter(Boolean);
    if (err.stalled) throw new FfmpegError(`ffmpeg could not process the file: it ${err.message}`);
    // The disk filled while ffmpeg wrote: not the file's fault; the job waits for room (jobs.ts).
    if (said.some((line) => /No space left on device|Disk quota exceeded/i.test(line)))
      throw diskFull(`ffmpeg could not write its output: ${said.slice(-1).join('')}`);
    if (said.some((line) => /matches no streams/.test(line)))
      throw new NoAudioStreamError('the file has no audio stream');
    // ffmpeg's own words, never its command line: both would name the engine's folders.
    throw new FfmpegError(
      `ffmpeg could not process the file: ${said.slice(-2).join(' / ') || `ffmpeg ${err.message}`}`,
    );
  }
}
