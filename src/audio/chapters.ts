// A file's chapters, read with ffprobe and written back as an FFMETADATA file for ffmpeg's encode
// (encodeAudio's `chapters`): for audio whose timeline moved, as an intro put before it or pauses cut.
import { writeFile } from 'node:fs/promises';
import { runChild } from './child-runs';
import { inputArgs, type MediaFormat } from './ffmpeg';

export interface Chapter {
  /** Seconds from the file's start. */
  start: number;
  end: number;
  title?: string;
}

interface ChaptersJson {
  chapters?: { start_time?: string; end_time?: string; tags?: { title?: string } }[];
}

/** The chapters of `path` (a file of `format`), in order; none when ffprobe is missing or reads none. */
export async function probeChapters(ffprobePath: string, path: string, format: MediaFormat): Promise<Chapter[]> {
  const answer: ChaptersJson = await runChild(ffprobePath, [
    '-v',
    'error',
    '-show_chapters',
    '-of',
    'json',
    ...inputArgs(path, format),
  ])
    .then(({ stdout }) => JSON.parse(stdout.toString('utf8')) as ChaptersJson)
    .catch(() => ({}));
  return (answer.chapters ?? [])
    .map((chapter) => ({
      start: Number(chapter.start_time),
      end: Number(chapter.end_time),
      ...(chapter.tags?.title !== undefined ? { title: chapter.tags.title } : {}),
    }))
    .filter((chapter) => Number.isFinite(chapter.start) && Number.isFinite(chapter.end));
}

/** The chapters as an FFMETADATA file, in milliseconds; a title's special characters escaped as the format asks. */
export async function writeChaptersFile(path: string, chapters: readonly Chapter[]): Promise<void> {
  const escape = (text: string) => text.replace(/[=;#\\\n]/g, (c) => `\\${c}`);
  const blocks = chapters.map((chapter) =>
    [
      '[CHAPTER]',
      'TIMEBASE=1/1000',
      `START=${Math.round(chapter.start * 1000)}`,
      `END=${Math.round(chapter.end * 1000)}`,
      ...(chapter.title !== undefined ? [`title=${escape(chapter.title)}`] : []),
    ].join('\n'),
  );
  await writeFile(path, [';FFMETADATA1', ...blocks, ''].join('\n'), { mode: 0o600 });
}
