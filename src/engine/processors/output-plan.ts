// What a job delivers, decided before any work: the output's format, whether ffmpeg is needed for it, and
// the encoding the output keeps or was asked for.
import { ffmpegAvailable } from '../../audio/ffmpeg';
import {
  isLossless,
  m4aHolds,
  outputCodec,
  planEncoding,
  vorbisQualityFor,
  type EncodingPlan,
} from '../../audio/output-encoding';
import { ffprobePathFor, probeSourceEncoding, type SourceEncoding } from '../../audio/source-encoding';
import { isEncodingMember, type OutputEncodingSettings } from '../../contract/extensions';
import type { OutputSettings } from '../../contract/fields';
import { needsFfmpeg } from '../jobs/ffmpeg-need';
import type { MediaType } from '../storage/media-type';
import { ProcessingError, type ProcessContext, type ProcessJob } from './processor';

const MP3: MediaType = { kind: 'audio', ext: 'mp3', contentType: 'audio/mpeg' };
const WAV: MediaType = { kind: 'audio', ext: 'wav', contentType: 'audio/wav' };

/** The requested transcode, else the input's own format. */
export function outputType(job: ProcessJob): MediaType {
  if (job.input.kind === 'video') return job.input;
  if (job.settings.transcode === 'MP3') return MP3;
  if (job.settings.transcode === 'WAV') return WAV;
  return job.input;
}

/** The audio file that holds a soundtrack of each codec as it is (a video's soundtrack alone). */
const SOUNDTRACK_FILES: Record<string, MediaType> = {
  mp3: MP3,
  opus: { kind: 'audio', ext: 'ogg', contentType: 'audio/ogg' },
  vorbis: { kind: 'audio', ext: 'ogg', contentType: 'audio/ogg' },
  flac: { kind: 'audio', ext: 'flac', contentType: 'audio/flac' },
};
const M4A: MediaType = { kind: 'audio', ext: 'm4a', contentType: 'audio/mp4' };

/**
 * An extra output's format (several outputs): its transcode, else the input's own; for a video, its
 * soundtrack alone in an audio file of the soundtrack's codec (AAC, ALAC, AC-3 in M4A; Opus, Vorbis in
 * Ogg; MP3; FLAC; PCM in WAV), probed with ffprobe (unknown, or E-AC-3, which no M4A holds: AAC in M4A).
 */
export async function extraOutputType(job: ProcessJob, output: OutputSettings, ffmpegPath: string): Promise<MediaType> {
  if (output.transcode === 'MP3') return MP3;
  if (output.transcode === 'WAV') return WAV;
  if (job.input.kind !== 'video') return job.input;
  const codec = (await soundtrackEncoding(job, ffmpegPath))?.codec ?? 'aac';
  return codec.startsWith('pcm_') ? WAV : (SOUNDTRACK_FILES[codec] ?? M4A);
}

function soundtrackEncoding(job: ProcessJob, ffmpegPath: string): Promise<SourceEncoding | undefined> {
  return probeSourceEncoding(ffprobePathFor(ffmpegPath), job.inputPath, job.input.ext, job.input.kind !== 'video');
}

/** Fails FFMPEG_REQUIRED when the input or an output is not WAV and the engine has no ffmpeg. */
export async function requireFfmpeg(job: ProcessJob, output: MediaType, context: ProcessContext): Promise<void> {
  // The same decision as an instance's that leaves such a job to another (jobs/ffmpeg-need.ts).
  if (needsFfmpeg(job.input, job.settings) && !(await ffmpegAvailable(context.ffmpegPath))) {
    // An extra output of a WAV input is WAV too unless transcoded to MP3.
    const extraEncoded = (job.settings.outputs ?? []).some((extra) => extra.transcode === 'MP3');
    throw new ProcessingError(
      'FFMPEG_REQUIRED',
      `${describe(job.input, output.ext === 'wav' && extraEncoded ? MP3 : output)} needs ffmpeg, which the engine did not find ("${context.ffmpegPath}"): install it (e.g. apt-get install ffmpeg) or send WAV, which never needs it`,
    );
  }
}

/**
 * The encoder's arguments for the output: the input's own encoding (probed with ffprobe), with the
 * user's output-encoding choices over it. A choice for an output that turns out lossless (an M4A holding
 * ALAC, a video's PCM soundtrack) is refused here, before any work.
 */
export async function planOutputEncoding(
  job: ProcessJob,
  output: MediaType,
  ffmpegPath: string,
  /** The choices of this output: the job's settings, or an extra output's. */
  asked: OutputEncodingSettings = job.settings,
): Promise<EncodingPlan> {
  const video = output.kind === 'video';
  const source = await soundtrackEncoding(job, ffmpegPath);
  // A video's soundtrack alone keeps its codec as the video would (its file was chosen for it), but for
  // one an M4A cannot hold (E-AC-3), which is encoded as the M4A's own AAC.
  const soundtrackKept =
    job.input.kind === 'video' && output.ext !== 'mp3' && (output.ext !== 'm4a' || m4aHolds(source?.codec));
  const codec = outputCodec(output.ext, source, video || soundtrackKept);
  const choices: OutputEncodingSettings = Object.fromEntries(
    Object.entries(asked).filter(([member, value]) => isEncodingMember(member) && value !== undefined),
  );
  const chosen = Object.keys(choices).filter((member) => choices[member as keyof OutputEncodingSettings] !== false);
  if (chosen.length > 0 && isLossless(codec)) {
    throw new ProcessingError(
      'INVALID_SETTINGS',
      `${chosen.join(', ')}: applies to a lossy output only; this ${output.ext.toUpperCase()} ${video ? "file's soundtrack" : 'file'} is ${codec}, which is lossless and kept so`,
    );
  }
  return planEncoding(codec, source, choices, (nominal, rate, channels) =>
    vorbisQualityFor(ffmpegPath, nominal, rate, channels),
  );
}

function describe(input: MediaType, output: MediaType): string {
  if (input.kind === 'video') return `processing a ${input.ext.toUpperCase()} video's soundtrack`;
  if (input.ext === 'wav') return `encoding to ${output.ext.toUpperCase()}`;
  return `decoding ${input.ext.toUpperCase()}`;
}
