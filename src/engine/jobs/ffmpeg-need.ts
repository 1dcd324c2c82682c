// Whether a media's job needs ffmpeg (anything but WAV in and WAV out does), and what an instance
// without it does with such a job when others share the work: it leaves the job to one that has it.
import type { EnhancementSettings } from '../../contract/fields';
import type { MediaType } from '../storage/media-type';

/**
 * As the processor decides: decoding anything but WAV, or encoding to anything but WAV (the output or an
 * extra one), needs ffmpeg.
 */
export function needsFfmpeg(input: MediaType, settings: Pick<EnhancementSettings, 'transcode' | 'outputs'>): boolean {
  if (input.ext !== 'wav' || input.kind === 'video') return true;
  const encoded = (transcode: string | undefined) => transcode !== undefined && transcode !== 'WAV';
  return encoded(settings.transcode) || (settings.outputs ?? []).some((output) => encoded(output.transcode));
}

/** The job needs ffmpeg, which this instance lacks: another instance is to run it (never a failure of the media). */
export class LeftForAnotherInstance extends Error {
  constructor(uid: string) {
    super(`media ${uid} needs ffmpeg, which this instance lacks: left to an instance that has it`);
  }
}
