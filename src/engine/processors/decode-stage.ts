// The decode stage: a compressed input becomes a float WAV among the work files, within the bounds its
// headers declare (decode-limits); a WAV is read where it is. A video without audio has nothing to decode.
import { copyFile } from 'node:fs/promises';
import { decodeToWav } from '../../audio/ffmpeg';
import { ffprobePathFor, probeAudioShape } from '../../audio/source-encoding';
import { checkCopyWhole } from '../../audio/whole-file';
import { checkAfterDecoding, checkBeforeDecoding, DEFAULT_MAX_DECODED_BYTES } from './decode-limits';
import type { ProcessContext, ProcessJob, ProcessResult } from './processor';
import { shareOfTime } from './share-of-time';
import { privateFile, type WorkFile } from './work-files';

/** The WAV the next stages read, or the finished result of a video with no audio (returned unchanged). */
export type Decoded = { source: string } | { unchanged: ProcessResult };

export async function decodeStage(
  job: ProcessJob,
  context: ProcessContext,
  work: WorkFile,
  onProgress?: (share: number) => void,
): Promise<Decoded> {
  if (job.input.ext === 'wav') return { source: job.inputPath };
  const maxDecodedBytes = context.maxDecodedBytes ?? DEFAULT_MAX_DECODED_BYTES;
  const shape = await probeAudioShape(ffprobePathFor(context.ffmpegPath), job.inputPath, job.input.ext);
  const bounds = checkBeforeDecoding(shape, job.input.ext, maxDecodedBytes);
  try {
    await privateFile(work('decoded.wav'));
    await decodeToWav(
      context.ffmpegPath,
      job.inputPath,
      job.input.ext,
      work('decoded.wav'),
      bounds,
      undefined,
      onProgress && shareOfTime(shape?.durationS, onProgress),
    );
    await checkAfterDecoding(work('decoded.wav'), job.input.ext, maxDecodedBytes);
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'NO_AUDIO' || job.input.kind !== 'video') throw err;
    await copyFile(job.inputPath, job.outputPath);
    await checkCopyWhole(job.inputPath, job.outputPath);
    return {
      unchanged: {
        params: { processing: 'none', note: 'the video has no audio stream: returned unchanged' },
        output: job.input,
      },
    };
  }
  return { source: work('decoded.wav') };
}
