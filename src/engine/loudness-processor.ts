// The engine's default processor: loudness normalization (src/audio) of audio and of a video's
// soundtrack. WAV is read and written directly; every other format goes through ffmpeg when it is
// installed. No speech-enhancement model is applied: the settings for one are only recorded.
import { copyFile, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { decodeToWav, encodeAudio, ffmpegAvailable, replaceSoundtrack, type AudioContainer, type VideoContainer } from '../audio/ffmpeg';
import type { LoudnessMeasurement } from '../audio/loudness-meter';
import { measureWavFile } from '../audio/measure';
import { normalizeWavFile, type NormalizeReport } from '../audio/normalize';
import type { MediaType } from './media-type';
import { ProcessingError, type ProcessContext, type ProcessJob, type ProcessResult } from './processor';

const FLOAT_WAV = { bitsPerSample: 32, encoding: 'float' } as const;
const PCM24_WAV = { bitsPerSample: 24, encoding: 'int' } as const;
/** Lossy encoders can overshoot the limiter's ceiling; beyond this, the file is made again with room. */
const ENCODER_OVERSHOOT_DB = 0.1;

export async function processMedia(job: ProcessJob, context: ProcessContext = { ffmpegPath: 'ffmpeg' }): Promise<ProcessResult> {
  const output = outputType(job);
  const target = { targetLufs: job.settings.loudness_target, ceilingDbtp: job.settings.true_peak };
  await removeLeftovers(job.outputPath);
  try {
    let report: NormalizeReport;
    if (job.input.ext === 'wav' && output.ext === 'wav') {
      report = await normalizeWavFile(job.inputPath, job.outputPath, target);
    } else {
      if (!(await ffmpegAvailable(context.ffmpegPath))) {
        throw new ProcessingError('FFMPEG_REQUIRED', `${describe(job.input, output)} needs ffmpeg, which the engine did not find ("${context.ffmpegPath}"): install it (e.g. apt-get install ffmpeg) or send WAV, which never needs it`);
      }
      const processed = await throughFfmpeg(job, output, context.ffmpegPath, target);
      if (!processed) {
        await copyFile(job.inputPath, job.outputPath);
        return { params: { ...modelNote(), processing: 'none', note: 'the video has no audio stream: returned unchanged' }, output: job.input };
      }
      report = processed;
    }
    return { params: { ...modelNote(), ...reportParams(report) }, output };
  } catch (err) {
    if (err instanceof ProcessingError) throw err;
    const code = (err as { code?: unknown }).code;
    if (code === 'INVALID_WAV' || code === 'DECODE_FAILED' || code === 'FFMPEG_REQUIRED' || code === 'NO_AUDIO') throw new ProcessingError(code === 'INVALID_WAV' ? 'INVALID_MEDIA' : code, (err as Error).message);
    throw err;
  }
}

/** Decode to WAV, normalize, encode or mux back; undefined when a video has no soundtrack. */
async function throughFfmpeg(job: ProcessJob, output: MediaType, ffmpegPath: string, target: { targetLufs: number; ceilingDbtp: number }): Promise<NormalizeReport | undefined> {
  const decoded = `${job.outputPath}.decoded.wav`;
  const normalized = `${job.outputPath}.normalized.wav`;
  const check = `${job.outputPath}.check.wav`;
  const encoded = `${job.outputPath}.encoded`; // renamed into place only when complete
  try {
    let source = job.inputPath;
    if (job.input.ext !== 'wav') {
      try {
        await decodeToWav(ffmpegPath, job.inputPath, decoded);
      } catch (err) {
        if ((err as { code?: unknown }).code === 'NO_AUDIO' && job.input.kind === 'video') return undefined;
        throw err;
      }
      source = decoded;
    }
    if (output.ext === 'wav') return await normalizeWavFile(source, job.outputPath, { ...target, outputFormat: PCM24_WAV });
    let ceiling = target.ceilingDbtp;
    for (let attempt = 0; ; attempt++) {
      const report = await normalizeWavFile(source, normalized, { ...target, ceilingDbtp: ceiling, outputFormat: FLOAT_WAV });
      if (output.kind === 'video') await replaceSoundtrack(ffmpegPath, job.inputPath, normalized, encoded, output.ext as VideoContainer);
      else await encodeAudio(ffmpegPath, normalized, encoded, output.ext as AudioContainer);
      // Report what the encoded file holds, measured after decoding it again.
      await decodeToWav(ffmpegPath, encoded, check);
      const delivered: LoudnessMeasurement = await measureWavFile(check);
      const overshoot = delivered.truePeakDbtp - target.ceilingDbtp;
      if (overshoot <= ENCODER_OVERSHOOT_DB || attempt === 1 || report.unchangedBecause) {
        await rename(encoded, job.outputPath);
        return { ...report, output: delivered };
      }
      ceiling -= overshoot + ENCODER_OVERSHOOT_DB;
    }
  } finally {
    await Promise.all([decoded, normalized, check, encoded].map((path) => rm(path, { force: true })));
  }
}

/** Work files (`output.*`) that an engine stopped mid-job left behind: the job starts over, so they go. */
async function removeLeftovers(outputPath: string): Promise<void> {
  const folder = dirname(outputPath);
  const prefix = `${basename(outputPath)}.`;
  const names = await readdir(folder).catch(() => [] as string[]);
  await Promise.all(names.filter((name) => name.startsWith(prefix)).map((name) => rm(join(folder, name), { force: true })));
}

/** The requested transcode, else the input's own format. */
function outputType(job: ProcessJob): MediaType {
  if (job.input.kind === 'video') return job.input;
  if (job.settings.transcode === 'MP3') return { kind: 'audio', ext: 'mp3', contentType: 'audio/mpeg' };
  if (job.settings.transcode === 'WAV') return { kind: 'audio', ext: 'wav', contentType: 'audio/wav' };
  return job.input;
}

function describe(input: MediaType, output: MediaType): string {
  if (input.kind === 'video') return `processing a ${input.ext.toUpperCase()} video's soundtrack`;
  if (input.ext === 'wav') return `encoding to ${output.ext.toUpperCase()}`;
  return `decoding ${input.ext.toUpperCase()}`;
}

function modelNote() {
  return { speech_enhancement: 'none (the local engine applies no speech-enhancement model; enhancement_model and enhancement_level are recorded only)' };
}

function reportParams(report: NormalizeReport): Record<string, unknown> {
  const round = (value: number) => (Number.isFinite(value) ? Math.round(value * 100) / 100 : null);
  return {
    processing: report.unchangedBecause ? 'none' : 'loudness',
    input_loudness_lufs: round(report.input.integratedLufs),
    input_true_peak_dbtp: round(report.input.truePeakDbtp),
    input_loudness_range_lu: round(report.input.loudnessRangeLu),
    output_loudness_lufs: round(report.output.integratedLufs),
    output_true_peak_dbtp: round(report.output.truePeakDbtp),
    output_loudness_range_lu: round(report.output.loudnessRangeLu),
    gain_db: round(report.gainDb),
    limiter_reduction_db: round(report.limiterReductionDb),
    ...(report.unchangedBecause ? { note: report.unchangedBecause } : {}),
  };
}
