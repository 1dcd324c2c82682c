// An episode as published: the intro and the outro levelled to the episode's target with loudness only
// (the normaliser and true-peak limiter of the engine's LOUDNESS_ONLY, run here), joined to the enhanced
// episode (with an optional crossfade) and written over it in its own format and encoding, its tags and
// cover kept and its chapters moved by the intro's length, a chapter marking the intro and the outro.
// It runs beside the node, after the download, so it works with any service: no service declares an
// intro, and one that enhances the episode is all it needs.
import { open, rename } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { probeChapters, writeChaptersFile, type Chapter } from '../audio/chapters';
import { joinWavFiles } from '../audio/join-wav';
import { normalizeWavFile } from '../audio/normalize';
import { ffprobePathFor } from '../audio/source-encoding';
import { copyWavChunks } from '../audio/wav-chunks';
import { readWavLayout, type WavLayout } from '../audio/wav-format';
import { checkWavWhole } from '../audio/whole-file';
import { encodeNormalized } from '../engine/processors/encode-normalized';
import { FLOAT_WAV, type LoudnessTarget } from '../engine/processors/first-round';
import { planOutputEncoding } from '../engine/processors/output-plan';
import { DEFAULT_MAX_DECODED_BYTES } from '../engine/processors/decode-limits';
import type { ProcessJob } from '../engine/processors/processor';
import { sniffMediaType, SNIFF_BYTES, type MediaType } from '../engine/storage/media-type';
import { checkJoinDecodes, decodeWithin, type JoinDecode } from './episode-decodes';
import type { EpisodeParts } from './episode-parts';
import { makeJoinFolder, removeJoinFolder } from './join-folders';

/** The titles of the chapters that mark the intro and the outro. */
export const INTRO_CHAPTER = 'Intro';
export const OUTRO_CHAPTER = 'Outro';

/** What the join did, for msg.episode: figures in seconds and as ffmpeg-comparable loudness. */
export interface EpisodeReport {
  /** Where the episode starts in the published file (the intro's length less the crossfade). */
  episode_start_s: number;
  duration_s: number;
  crossfade_s: number;
  intro?: PartReport;
  outro?: PartReport;
  /** The published file as delivered (decoded again after a lossy encode). */
  integrated_lufs: number;
  true_peak_dbtp: number;
  chapters: Chapter[];
}

interface PartReport {
  path: string;
  duration_s: number;
  input_loudness_lufs: number;
  /** After levelling, before the join. */
  loudness_lufs: number;
  limiter_reduction_db: number;
}

/** How a join that can be cut by a restart keeps its place (the node's kept message). */
export interface JoinKeeping {
  /** A stopped join leaves the episode as it was (checked between steps and last just before the file is replaced). */
  signal?: AbortSignal;
  /** Told what the join did just before the joined file replaces the episode, so a restart in between still knows it. */
  beforeReplace?: (report: EpisodeReport) => Promise<void>;
}

/**
 * Joins `parts` to the episode at `episodePath` (a file the node wrote), replacing it when complete. What it
 * decodes stays within `maxDecodedBytes`, the engine's limit on decoded audio (episode-decodes.ts).
 */
export async function joinEpisode(
  episodePath: string,
  parts: EpisodeParts,
  target: Required<LoudnessTarget>,
  ffmpegPath: string,
  keeping: JoinKeeping = {},
  maxDecodedBytes = DEFAULT_MAX_DECODED_BYTES,
): Promise<EpisodeReport> {
  const goOn = () => keeping.signal?.throwIfAborted();
  const episodeType = await typeOf(episodePath, 'the enhanced episode');
  if (episodeType.kind === 'video')
    throw new Error(
      `an intro or an outro is joined to audio only; this episode is a ${episodeType.ext.toUpperCase()} video`,
    );
  // Beside the output: the finished file is renamed into place on the same file system.
  const folder = await makeJoinFolder(episodePath);
  const work = (name: string) => join(folder, name);
  try {
    let episodeWav = episodePath;
    if (episodeType.ext !== 'wav') {
      episodeWav = work('episode.wav');
      const episode = { what: 'the enhanced episode', path: episodePath, type: episodeType };
      const [bounds] = await checkJoinDecodes(ffmpegPath, [episode], undefined, maxDecodedBytes);
      await decodeWithin(ffmpegPath, episode, episodeWav, bounds, maxDecodedBytes);
    }
    const shape = await wavFormatOf(episodeWav);
    // Every part is checked before any is decoded: the joined file holds the episode and both.
    const toDecode: Partial<Record<'intro' | 'outro', JoinDecode>> = {};
    for (const name of ['intro', 'outro'] as const) {
      const path = parts[name];
      if (path)
        toDecode[name] = { what: `the ${name} (${basename(path)})`, path, type: await typeOf(path, `the ${name}`) };
    }
    const listed = Object.values(toDecode);
    const partBounds = await checkJoinDecodes(ffmpegPath, listed, shape, maxDecodedBytes, floatBytesOf(shape));
    const level = async (name: 'intro' | 'outro'): Promise<PartReport> => {
      const file = toDecode[name]!;
      const bounds = partBounds[listed.indexOf(file)];
      await decodeWithin(ffmpegPath, file, work(`${name}.decoded.wav`), bounds, maxDecodedBytes, shape);
      // Loudness only (music): the engine's LOUDNESS_ONLY, to the episode's target and ceiling.
      const report = await normalizeWavFile(work(`${name}.decoded.wav`), work(`${name}.wav`), {
        ...target,
        outputFormat: FLOAT_WAV,
      });
      return {
        path: file.path,
        duration_s: round(report.output.seconds, 3),
        input_loudness_lufs: round(report.input.integratedLufs),
        loudness_lufs: round(report.output.integratedLufs),
        limiter_reduction_db: round(report.limiterReductionDb),
      };
    };
    const intro = parts.intro ? await level('intro') : undefined;
    goOn();
    const outro = parts.outro ? await level('outro') : undefined;
    goOn();
    const sequence = [...(intro ? [work('intro.wav')] : []), episodeWav, ...(outro ? [work('outro.wav')] : [])];
    const joined = await joinWavFiles(
      sequence,
      work('joined.wav'),
      Math.round(parts.crossfadeSeconds * shape.sampleRate),
    );
    goOn();
    const seconds = (frames: number) => frames / joined.sampleRate;
    const episodePart = joined.parts[intro ? 1 : 0];
    const episodeStart = seconds(episodePart.startFrame);
    const episodeEnd = seconds(episodePart.startFrame + episodePart.frames);
    const total = seconds(joined.frames);
    const chapters = await publishedChapters(ffmpegPath, episodePath, episodeType, {
      episodeStart,
      episodeEnd,
      total,
      intro: intro !== undefined,
      outro: outro !== undefined,
    });

    const published = work(`published.${episodeType.ext}`);
    // Each part is on target: the whole is too, and the limiter only catches what a crossfade added.
    let delivered: { integratedLufs: number; truePeakDbtp: number };
    if (episodeType.ext === 'wav') {
      const report = await normalizeWavFile(work('joined.wav'), published, {
        ...target,
        outputFormat: { bitsPerSample: shape.bitsPerSample, encoding: shape.encoding },
      });
      await copyWavChunks(episodePath, published);
      await checkWavWhole(published);
      delivered = report.output;
    } else {
      await writeChaptersFile(work('chapters.txt'), chapters);
      const job: ProcessJob = {
        inputPath: episodePath,
        outputPath: published,
        input: episodeType,
        settings: {
          loudness_target: target.targetLufs,
          true_peak: target.ceilingDbtp,
          enhancement_model: 'LOUDNESS_ONLY',
        },
      };
      // The episode's own encoding (as the service kept it): codec, bitrate and mode, rate, channels.
      const encoding = await planOutputEncoding(job, episodeType, ffmpegPath);
      const report = await encodeNormalized(
        job,
        { path: work('joined.wav') },
        episodeType,
        encoding.args,
        ffmpegPath,
        (name) => work(`encode.${name}`),
        target,
        () => undefined,
        work('chapters.txt'),
      );
      delivered = report.output;
    }
    const report: EpisodeReport = {
      episode_start_s: round(episodeStart, 3),
      duration_s: round(total, 3),
      crossfade_s: parts.crossfadeSeconds,
      ...(intro ? { intro } : {}),
      ...(outro ? { outro } : {}),
      integrated_lufs: round(delivered.integratedLufs),
      true_peak_dbtp: round(delivered.truePeakDbtp),
      chapters: episodeType.ext === 'wav' ? [] : chapters,
    };
    goOn();
    await keeping.beforeReplace?.(report);
    goOn();
    await rename(published, episodePath);
    return report;
  } finally {
    await removeJoinFolder(folder);
  }
}

/**
 * The episode's chapters moved to where the episode starts, the last one ending where it ends; an intro
 * chapter before them and an outro chapter after. An episode without chapters gets one for itself, so
 * the list covers the file.
 */
async function publishedChapters(
  ffmpegPath: string,
  episodePath: string,
  type: MediaType,
  at: { episodeStart: number; episodeEnd: number; total: number; intro: boolean; outro: boolean },
): Promise<Chapter[]> {
  const own = type.ext === 'wav' ? [] : await probeChapters(ffprobePathFor(ffmpegPath), episodePath, type.ext);
  const episode: Chapter[] = (
    own.length > 0 ? own : [{ start: 0, end: at.episodeEnd - at.episodeStart, title: 'Episode' }]
  ).map((chapter) => ({
    ...chapter,
    start: round(chapter.start + at.episodeStart, 3),
    end: round(Math.min(chapter.end + at.episodeStart, at.episodeEnd), 3),
  }));
  return [
    ...(at.intro ? [{ start: 0, end: round(at.episodeStart, 3), title: INTRO_CHAPTER }] : []),
    ...episode,
    ...(at.outro ? [{ start: round(at.episodeEnd, 3), end: round(at.total, 3), title: OUTRO_CHAPTER }] : []),
  ];
}

async function typeOf(path: string, what: string): Promise<MediaType> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await file.read(head, 0, SNIFF_BYTES, 0);
    const type = sniffMediaType(head.subarray(0, bytesRead));
    if (!type) throw new Error(`${what} (${basename(path)}) is not a media file the package reads`);
    return type;
  } finally {
    await file.close();
  }
}

/** The bytes of a WAV's samples as 32-bit float (how the joined file holds them). */
function floatBytesOf(layout: WavLayout): number {
  return layout.frames * layout.channels * 4;
}

async function wavFormatOf(path: string): Promise<WavLayout> {
  const file = await open(path, 'r');
  try {
    return await readWavLayout(file);
  } finally {
    await file.close();
  }
}

function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
