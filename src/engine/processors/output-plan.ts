// What a job delivers, decided before any work: the output's format, whether ffmpeg is needed for it, and
// the encoding the output keeps or was asked for.
import { ffmpegAvailable } from '../../audio/ffmpeg';
import {
  isLossless,
  outputCodec,
  planEncoding,
  vorbisQualityFor,
  type EncodingPlan,
} from '../../audio/output-encoding';
import { ffprobePathFor, probeSourceEncoding } from '../../audio/source-encoding';
import { isEncodingMember, type OutputEncodingSettings } from '../../contract/extensions';
import type { MediaType } from '../storage/media-type';
import { ProcessingError, type ProcessContext, type ProcessJob } from './processor';

/** The requested transcode, else the input's own format. */
export function outputType(job: ProcessJob): MediaType {
  if (job.input.kind === 'video') return job.input;
  if (job.settings.transcode === 'MP3') return { kind: 'audio', ext: 'mp3', contentType: 'audio/mpeg' };
  if (job.settings.transcode === 'WAV') return { kind: 'audio', ext: 'wav', contentType: 'audio/wav' };
  return job.input;
}

/** Fails FFMPEG_REQUIRED when the input or the output is not WAV and the engine has no ffmpeg. */
export async function requireFfmpeg(job: ProcessJob, output: MediaType, context: ProcessContext): Promise<void> {
  const needsFfmpeg = job.input.ext !== 'wav' || output.ext !== 'wav';
  if (needsFfmpeg && !(await ffmpegAvailable(context.ffmpegPath))) {
    throw new ProcessingError(
      'FFMPEG_REQUIRED',
      `${describe(job.input, output)} needs ffmpeg, which the engine did not find ("${context.ffmpegPath}"): install it (e.g. apt-get install ffmpeg) or send WAV, which never needs it`,
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
): Promise<EncodingPlan> {
  const video = output.kind === 'video';
  const source = await probeSourceEncoding(ffprobePathFor(ffmpegPath), job.inputPath, job.input.ext, !video);
  const codec = outputCodec(output.ext, source, video);
  const choices: OutputEncodingSettings = Object.fromEntries(
    Object.entries(job.settings).filter(([member, value]) => isEncodingMember(member) && value !== undefined),
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
