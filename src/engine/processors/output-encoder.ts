// One output's encoder: a normalized WAV encoded whole into the output's format (or muxed into the
// video as its soundtrack), then decoded again and measured, for the rounds that decide what is kept.
import { rename } from 'node:fs/promises';
import {
  decodeToWav,
  encodeAudio,
  replaceSoundtrack,
  type AudioContainer,
  type VideoContainer,
} from '../../audio/ffmpeg';
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import { measureWavFile } from '../../audio/measure';
import { ffprobePathFor, probeStreamTypes } from '../../audio/source-encoding';
import type { MediaType } from '../storage/media-type';
import type { ProcessJob } from './processor';
import { shareOfTime } from './share-of-time';
import { privateFile, type WorkFile } from './work-files';

/** Where the encode ends and the check of the encoded file ends, within the share of the work an encode is told. */
const ENCODE_PARTS = { encoded: 0.8, checked: 0.9 } as const;

export class OutputEncoder {
  private constructor(
    private readonly job: ProcessJob,
    readonly output: MediaType,
    /** ffmpeg's arguments for the audio stream (`-c:a ...`). */
    readonly encoder: string[],
    private readonly ffmpegPath: string,
    private readonly work: WorkFile,
    private readonly chapters: string | undefined,
    private readonly streamTypes: string[] | undefined,
  ) {}

  /** `chapters`: an FFMETADATA file of chapters that replace the input's (chapters.ts); audio outputs only. */
  static async open(
    job: ProcessJob,
    output: MediaType,
    encoder: string[],
    ffmpegPath: string,
    work: WorkFile,
    chapters?: string,
  ): Promise<OutputEncoder> {
    const streamTypes =
      output.kind === 'video'
        ? await probeStreamTypes(ffprobePathFor(ffmpegPath), job.inputPath, job.input.ext)
        : undefined;
    return new OutputEncoder(job, output, encoder, ffmpegPath, work, chapters, streamTypes);
  }

  /**
   * Encodes `normalized` whole into the work file `encoded` and measures what it holds, decoded again; its
   * progress told (0 to 1) as ffmpeg writes: a long file's encode is most of the work, and would otherwise
   * stand still. `encoderArgs`: another coder for the same output (the AAC encoder's fast one).
   */
  async encodeWhole(
    normalized: string,
    seconds: number,
    onProgress: (share: number) => void,
    encoderArgs: string[] = this.encoder,
  ): Promise<LoudnessMeasurement> {
    const { job, output, work, ffmpegPath } = this;
    const part = (from: number, to: number) => (share: number) => onProgress(from + (to - from) * share);
    const encoding = shareOfTime(seconds, part(0, ENCODE_PARTS.encoded));
    const checking = shareOfTime(seconds, part(ENCODE_PARTS.encoded, ENCODE_PARTS.checked));
    await privateFile(work('encoded'));
    if (output.kind === 'video')
      await replaceSoundtrack(
        ffmpegPath,
        job.inputPath,
        normalized,
        work('encoded'),
        output.ext as VideoContainer,
        encoderArgs,
        this.streamTypes,
        encoding,
      );
    else {
      // A video's soundtrack alone (an extra output) keeps the video's tags and chapters, never its picture as a cover.
      const soundtrackAlone = job.input.kind === 'video';
      await encodeAudio(
        ffmpegPath,
        normalized,
        work('encoded'),
        output.ext as AudioContainer,
        encoderArgs,
        {
          path: job.inputPath,
          format: job.input.ext,
          ...(this.chapters ? { chapters: this.chapters } : {}),
          ...(soundtrackAlone ? { pictures: false } : {}),
        },
        encoding,
      );
    }
    await privateFile(work('check.wav'));
    await decodeToWav(ffmpegPath, work('encoded'), output.ext, work('check.wav'), {}, undefined, checking);
    const delivered = await measureWavFile(work('check.wav'), undefined, part(ENCODE_PARTS.checked, 1));
    onProgress(1);
    return delivered;
  }

  /** The last encode set aside, so that the next one does not replace it. */
  async keepAside(): Promise<void> {
    await rename(this.work('encoded'), this.work('encoded.before'));
  }

  /** The encode set aside made the last one again. */
  async takeBack(): Promise<void> {
    await rename(this.work('encoded.before'), this.work('encoded'));
  }

  /** The last encode moved to `destination`: into place only when complete. */
  async deliverTo(destination: string): Promise<void> {
    await rename(this.work('encoded'), destination);
  }

  /**
   * The same encoder with ffmpeg's own AAC encoder's fast coder (`-aac_coder fast`) in place of the default
   * one, whose lone spikes at low bitrates no gain or ceiling corrects; undefined for another encoder, or a
   * coder chosen already.
   */
  steadierEncoder(): string[] | undefined {
    const { encoder } = this;
    const codec = encoder[encoder.indexOf('-c:a') + 1];
    if (!encoder.includes('-c:a') || codec !== 'aac' || encoder.includes('-aac_coder')) return undefined;
    return [...encoder, '-aac_coder', 'fast'];
  }
}
