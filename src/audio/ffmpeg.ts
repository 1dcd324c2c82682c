// ffmpeg for what is not WAV: decoding any accepted format to WAV, encoding the result back, and
// putting a processed soundtrack back into a video with the picture copied as it was.
import { execFile } from 'node:child_process';
import { basename, isAbsolute } from 'node:path';

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

const available = new Map<string, Promise<boolean>>();

export function ffmpegAvailable(ffmpegPath: string): Promise<boolean> {
  let answer = available.get(ffmpegPath);
  if (!answer) {
    answer = new Promise((resolve) => execFile(ffmpegPath, ['-hide_banner', '-version'], (err) => resolve(!err)));
    available.set(ffmpegPath, answer);
  }
  return answer;
}

/** The first audio stream of `input`, as a 32-bit float WAV (RF64 when it needs to be). */
export async function decodeToWav(ffmpegPath: string, input: string, output: string): Promise<void> {
  await run(ffmpegPath, [
    '-i',
    input,
    '-map',
    '0:a:0',
    '-vn',
    '-c:a',
    'pcm_f32le',
    '-rf64',
    'auto',
    '-f',
    'wav',
    output,
  ]);
}

/** `wav` encoded into `container` with `encoder`'s arguments (output-encoding.ts). */
export async function encodeAudio(
  ffmpegPath: string,
  wav: string,
  output: string,
  container: AudioContainer,
  encoder: string[],
): Promise<void> {
  await run(ffmpegPath, ['-i', wav, ...encoder, '-f', container === 'm4a' ? 'ipod' : container, output]);
}

/** `video`'s picture (and subtitles) copied untouched, with `wav` as its only soundtrack. */
export async function replaceSoundtrack(
  ffmpegPath: string,
  video: string,
  wav: string,
  output: string,
  container: VideoContainer,
  encoder: string[],
): Promise<void> {
  const format = container === 'mkv' ? 'matroska' : container;
  await run(ffmpegPath, [
    '-i',
    video,
    '-i',
    wav,
    '-map',
    '0:v',
    '-map',
    '0:s?',
    '-map',
    '1:a:0',
    '-c',
    'copy',
    ...encoder,
    '-map_metadata',
    '0',
    '-f',
    format,
    output,
  ]);
}

/** ffmpeg names its files by the paths it was given: each becomes its last part ("input"), as a media's error may say. */
function withoutPaths(text: string, args: string[]): string {
  let result = text;
  for (const arg of args) if (isAbsolute(arg)) result = result.split(arg).join(basename(arg));
  return result;
}

function run(ffmpegPath: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      ffmpegPath,
      ['-nostdin', '-hide_banner', '-v', 'error', '-y', ...args],
      { maxBuffer: 4 << 20 },
      (err, _stdout, stderr) => {
        if (!err) return resolve();
        if ((err as NodeJS.ErrnoException).code === 'ENOENT')
          return reject(new FfmpegMissingError(`ffmpeg was not found at "${ffmpegPath}"`));
        const said = withoutPaths(String(stderr), args).trim().split('\n').filter(Boolean);
        if (said.some((line) => /matches no streams/.test(line)))
          return reject(new NoAudioStreamError('the file has no audio stream'));
        // ffmpeg's own words, never its command line (err.message): both would name the engine's folders.
        const exit = typeof err.code === 'number' ? `ffmpeg exited with code ${err.code}` : 'ffmpeg failed';
        reject(new FfmpegError(`ffmpeg could not process the file: ${said.slice(-2).join(' / ') || exit}`));
      },
    );
  });
}
