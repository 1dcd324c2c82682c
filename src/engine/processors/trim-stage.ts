// The trim stage (the trim-pauses extension): pauses longer than `trim_pauses_s` shortened to it, found by
// the voice activity the enhancement chain measured, cut inside the pause with a short crossfade
// (audio/trim-pauses.ts); the chapters then move with the cuts.
import { probeChapters, writeChaptersFile } from '../../audio/chapters';
import { ffprobePathFor } from '../../audio/source-encoding';
import { cutWavFile, planCuts, timeAfterCuts, type TrimReport } from '../../audio/trim-pauses';
import type { Enhanced } from './enhance-stage';
import type { ProcessJob } from './processor';
import type { WorkFile } from './work-files';

export interface Trimmed {
  /** The WAV the normalize stage reads. */
  path: string;
  report?: TrimReport & { limitS: number };
}

export async function trimStage(job: ProcessJob, enhanced: Enhanced, work: WorkFile): Promise<Trimmed> {
  const limitS = job.settings.trim_pauses_s;
  const voice = enhanced.report?.voice;
  if (limitS === undefined || !voice) return { path: enhanced.path };
  const cuts = planCuts(voice.perFrame, voice.frameSeconds, limitS);
  const report = await cutWavFile(enhanced.path, work('trimmed.wav'), cuts);
  return { path: work('trimmed.wav'), report: { ...report, limitS } };
}

/**
 * The input's chapters moved with the cuts, as an FFMETADATA file among the work files; undefined when
 * nothing was cut or the input has no chapters (the encode then copies the input's as they are).
 */
export async function movedChapters(
  job: ProcessJob,
  trimmed: Trimmed,
  ffmpegPath: string,
  work: WorkFile,
): Promise<string | undefined> {
  const cuts = trimmed.report?.cuts ?? [];
  if (cuts.length === 0 || job.input.ext === 'wav') return undefined;
  const chapters = await probeChapters(ffprobePathFor(ffmpegPath), job.inputPath, job.input.ext);
  if (chapters.length === 0) return undefined;
  await writeChaptersFile(
    work('chapters.txt'),
    chapters.map((chapter) => ({
      ...chapter,
      start: timeAfterCuts(chapter.start, cuts),
      end: timeAfterCuts(chapter.end, cuts),
    })),
  );
  return work('chapters.txt');
}
