// The engine's default processor: speech enhancement (src/enhance: high-pass, hum removal, noise
// reduction by DeepFilterNet3 or RNNoise, leveler, as the model says) and then loudness normalization (src/audio), for audio
// and for a video's soundtrack. WAV is read and written directly; every other format goes through
// ffmpeg when it is installed.
import { copyFile, open, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  decodeToWav,
  encodeAudio,
  ffmpegAvailable,
  replaceSoundtrack,
  type AudioContainer,
  type VideoContainer,
} from '../../audio/ffmpeg';
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import {
  isLossless,
  outputCodec,
  planEncoding,
  vorbisQualityFor,
  type EncodingPlan,
} from '../../audio/output-encoding';
import { ffprobePathFor, probeAudioShape, probeSourceEncoding, probeStreamTypes } from '../../audio/source-encoding';
import { EXTENSION_OF, type OutputEncodingSettings } from '../../contract/extensions';
import { measureWavFile } from '../../audio/measure';
import {
  AIM_LU,
  DEFAULT_MAX_LIMITING_DB,
  normalizeWavFile,
  onTarget,
  type NormalizeOptions,
  type NormalizeReport,
} from '../../audio/normalize';
import { copyWavChunks } from '../../audio/wav-chunks';
import { checkCopyWhole, checkWavWhole } from '../../audio/whole-file';
import { isDiskFull } from '../../audio/write-fully';
import { readWavLayout } from '../../audio/wav-format';
import { enhanceWavFile } from '../../enhance/chain';
import type { EnhancementModel } from '../../enhance/chain-types';
import { runChannelTask, type ChannelTask } from '../../enhance/channel-task';
import { enhancementParams } from '../../enhance/report';
import { LOUDNESS_ONLY_MODEL } from '../../contract/extensions';
import { SETTINGS_DEFAULTS } from '../../contract/fields';
import { checkAfterDecoding, checkBeforeDecoding, DEFAULT_MAX_DECODED_BYTES } from './decode-limits';
import { loudnessTrack } from './loudness-track';
import { StagedProgress, type StageWeights } from './staged-progress';
import type { MediaType } from '../storage/media-type';
import {
  ProcessingError,
  type ProcessContext,
  type ProcessJob,
  type ProcessResult,
  type ThreadHelp,
} from './processor';

const FLOAT_WAV = { bitsPerSample: 32, encoding: 'float' } as const;
const PCM24_WAV = { bitsPerSample: 24, encoding: 'int' } as const;
/**
 * A lossy encoder adds its own error to the peaks. Where it stands out over a peak left under the ceiling
 * (speech at a low bitrate), its amplitude stays about the same whatever the ceiling (it follows the
 * loudness, which stays) and lands on other peaks from one encode to the next: the second encode leaves
 * ENCODER_SPREAD times the amplitude the first one added as room. Where the limiter holds many peaks at
 * the ceiling (loud music), the overshoot grows with the limiting added for it (more peaks for the
 * encoder to push over): the room is OVERSHOOT_GROWTH times the overshoot, plus OVERSHOOT_MARGIN_DB.
 */
const ENCODER_SPREAD = 1.5;
const OVERSHOOT_GROWTH = 2;
const OVERSHOOT_MARGIN_DB = 0.2;
/** The most room left for an encoder under the ceiling (dB). */
const MAX_ENCODER_ROOM_DB = 6;
/** What the last encode is turned down by beyond what was still over. */
const TURN_DOWN_MARGIN_DB = 0.2;
/**
 * Limiting allowed beyond the bound per LU to win back in the second encode: limited music and speech
 * gain about a third of an LU per dB of gain.
 */
const LIMITING_PER_LOST_LU = 3;

/**
 * How long each stage takes against the others, per chain (from their times on the same two minutes of
 * speech, one after the other on one machine): the enhancement is most of a WAV's work, the more so the
 * heavier the model. Decoding counts only for non-WAV input. An output other than WAV is normalized,
 * encoded, decoded and measured once or twice (encodeNormalized): its last stage takes about twice
 * FINCH's enhancement (ENCODED_NORMALIZE_WEIGHT). Only the share shown rests on these: the time left is
 * measured (jobs/progress-estimate.ts).
 */
const STAGE_WEIGHTS: Record<EnhancementModel, StageWeights> = {
  FINCH: { decode: 1, measure: 1, enhance: 8, normalize: 4 },
  LARK: { decode: 1, measure: 1, enhance: 24, normalize: 4 },
  LARK_V2: { decode: 1, measure: 1, enhance: 26, normalize: 4 },
};
const LOUDNESS_ONLY_WEIGHTS: StageWeights = { decode: 1, measure: 1, enhance: 0, normalize: 4 };
const ENCODED_NORMALIZE_WEIGHT = 18;

/** A file's channels lent to another thread of the pool. */
export const runTask = (task: unknown) => runChannelTask(task as ChannelTask);

export async function processMedia(
  job: ProcessJob,
  context: ProcessContext = { ffmpegPath: 'ffmpeg' },
  help?: ThreadHelp,
): Promise<ProcessResult> {
  const output = outputType(job);
  const work = (name: string) => `${job.outputPath}.${name}`;
  const model = job.settings.enhancement_model;
  const weights = model === LOUDNESS_ONLY_MODEL ? LOUDNESS_ONLY_WEIGHTS : STAGE_WEIGHTS[model];
  const progress = new StagedProgress(
    {
      ...weights,
      ...(job.input.ext === 'wav' ? { decode: 0 } : {}),
      ...(output.ext !== 'wav' ? { normalize: ENCODED_NORMALIZE_WEIGHT } : {}),
    },
    help?.progress?.bind(help),
  );
  progress.at('decode');
  await removeLeftovers(job.outputPath);
  const needsFfmpeg = job.input.ext !== 'wav' || output.ext !== 'wav';
  if (needsFfmpeg && !(await ffmpegAvailable(context.ffmpegPath))) {
    throw new ProcessingError(
      'FFMPEG_REQUIRED',
      `${describe(job.input, output)} needs ffmpeg, which the engine did not find ("${context.ffmpegPath}"): install it (e.g. apt-get install ffmpeg) or send WAV, which never needs it`,
    );
  }
  try {
    let source = job.inputPath;
    if (job.input.ext !== 'wav') {
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
          shareOfTime(shape?.durationS, progress.of('decode')),
        );
        await checkAfterDecoding(work('decoded.wav'), job.input.ext, maxDecodedBytes);
      } catch (err) {
        if ((err as { code?: unknown }).code !== 'NO_AUDIO' || job.input.kind !== 'video') throw err;
        await copyFile(job.inputPath, job.outputPath);
        await checkCopyWhole(job.inputPath, job.outputPath);
        return {
          params: { processing: 'none', note: 'the video has no audio stream: returned unchanged' },
          output: job.input,
        };
      }
      source = work('decoded.wav');
    }
    // Checked before the work: the encoding the output keeps or was asked for.
    const encoding = output.ext === 'wav' ? undefined : await planOutputEncoding(job, output, context.ffmpegPath);
    // The loudness the user's file had, before enhancement changed it. Read whole, so a damaged file
    // fails here: any invalid WAV met after this is one the engine made.
    progress.at('measure');
    const original = await measureWavFile(source, progress.of('measure'));
    progress.at('enhance');
    const unusable = (err: unknown) =>
      (err as { code?: unknown }).code === 'INVALID_WAV' &&
      new ProcessingError(
        'ENHANCEMENT_FAILED',
        `speech enhancement failed: its output is not usable audio (${(err as Error).message}); the input peaks at ${original.samplePeakDbfs.toFixed(0)} dBFS`,
      );
    const level = job.settings.enhancement_level ?? SETTINGS_DEFAULTS.enhancement_level;
    const run = {
      threads: help?.threads,
      runElsewhere: help?.runElsewhere.bind(help),
      onProgress: progress.of('enhance'),
    };
    // LOUDNESS_ONLY (an extension): music, intros and clean recordings go to the normaliser as they are.
    const loudnessOnly = model === LOUDNESS_ONLY_MODEL;
    const enhancement = loudnessOnly
      ? undefined
      : await enhanceWavFile(source, work('enhanced.wav'), { model, level }, run).catch((err: unknown) => {
          // A full disk is not the enhancement's failure: it goes up as it is, and the job waits for room (jobs.ts).
          if (isDiskFull(err)) throw err;
          throw (
            unusable(err) ||
            new ProcessingError(
              'ENHANCEMENT_FAILED',
              `speech enhancement failed: ${(err as Error).message ?? String(err)}`,
            )
          );
        });
    const toNormalize = loudnessOnly ? source : work('enhanced.wav');
    progress.at('normalize');
    const target: LoudnessTarget = {
      targetLufs: job.settings.loudness_target,
      ceilingDbtp: job.settings.true_peak,
      maxLimitingDb: context.maxLimitingDb ?? DEFAULT_MAX_LIMITING_DB,
    };
    const report = await (
      output.ext === 'wav'
        ? normalizeWavFile(toNormalize, job.outputPath, {
            ...target,
            onProgress: progress.of('normalize'),
            outputFormat: job.input.ext === 'wav' ? await sampleFormatOf(job.inputPath) : PCM24_WAV,
          })
        : encodeNormalized(
            job,
            toNormalize,
            output,
            encoding!.args,
            context.ffmpegPath,
            work,
            target,
            progress.of('normalize'),
          )
    ).catch((err: unknown) => {
      throw unusable(err) || err;
    });
    // A silent file is returned as it came, never amplified (and in its own format).
    const returnedAsItCame = report.unchangedBecause !== undefined && job.input.ext === output.ext;
    if (returnedAsItCame) await copyFile(job.inputPath, job.outputPath);
    // A WAV written here carries over the input WAV's tags and metadata chunks (LIST/INFO, bext, iXML...).
    else if (output.ext === 'wav' && job.input.ext === 'wav') await copyWavChunks(job.inputPath, job.outputPath);
    // Never delivered unless whole: a file cut short (a full disk) fails the job's try, and it is tried again.
    if (returnedAsItCame) await checkCopyWhole(job.inputPath, job.outputPath);
    else if (output.ext === 'wav') await checkWavWhole(job.outputPath);
    return {
      params: {
        // A file returned as it came had nothing done to it: the report must not claim the chain's work.
        ...(returnedAsItCame || !enhancement
          ? notApplied(model, returnedAsItCame ? 'the file is returned as it came' : 'loudness only was asked')
          : enhancementParams(model as EnhancementModel, enhancement)),
        ...loudnessParams({ ...report, input: original }, returnedAsItCame, loudnessOnly, target),
        ...(encoding && !returnedAsItCame ? { output_encoding: encoding.applied } : {}),
      },
      output,
      // Both measured in passes made anyway: the original as read above, the output as written (or decoded after encoding).
      loudness: {
        input: loudnessTrack(original),
        output: loudnessTrack(returnedAsItCame ? original : report.output),
      },
    };
  } catch (err) {
    if (err instanceof ProcessingError) throw err;
    const code = (err as { code?: unknown }).code;
    if (code === 'INVALID_WAV' || code === 'DECODE_FAILED' || code === 'FFMPEG_REQUIRED' || code === 'NO_AUDIO')
      throw new ProcessingError(code === 'INVALID_WAV' ? 'INVALID_MEDIA' : code, (err as Error).message);
    throw err;
  } finally {
    await Promise.all(
      ['decoded.wav', 'enhanced.wav', 'normalized.wav', 'limited.wav', 'check.wav', 'encoded'].map((name) =>
        rm(work(name), { force: true }),
      ),
    );
  }
}

type LoudnessTarget = Pick<NormalizeOptions, 'targetLufs' | 'ceilingDbtp' | 'maxLimitingDb'>;

/**
 * Normalize to float WAV, then encode (or mux into the video), measuring what the encoded file holds.
 *
 * A lossy encoder pushes true peaks over the limiter's ceiling (by more on dense music than on speech) and
 * shifts the loudness a little. The first encode measures both; when either misses, the second is made
 * once with the ceiling lowered by that overshoot and the aim moved by that shift: at most two encodes,
 * never a ceiling lowered round after round. The room left for the encoder, and the limiting that makes up
 * the loudness it took off, are not counted against the bound on limiting, so a lossy output reaches the
 * target when the lossless path does (not only when it does with room to spare). Should the
 * second encode still overshoot (the encoder's overshoot grew with the extra limiting), the same audio is
 * turned down by the rest and encoded a last time: under the ceiling, a little short of the target, said so.
 */
async function encodeNormalized(
  job: ProcessJob,
  source: string,
  output: MediaType,
  encoder: string[],
  ffmpegPath: string,
  work: (name: string) => string,
  target: LoudnessTarget,
  onProgress: (share: number) => void,
): Promise<EncodedReport> {
  const streamTypes =
    output.kind === 'video'
      ? await probeStreamTypes(ffprobePathFor(ffmpegPath), job.inputPath, job.input.ext)
      : undefined;
  const maxLimitingDb = target.maxLimitingDb ?? DEFAULT_MAX_LIMITING_DB;
  // Normalizes `from` with `options`, encodes and measures the encoded file. The first round is said to take
  // half of the work, a second one a quarter, a last one the rest; within a round, the encode tells its own
  // progress as ffmpeg writes (a long file's encode is most of the round, and would otherwise stand still).
  const round = async (from: string, options: NormalizeOptions, span: [number, number]) => {
    const [start, share] = span;
    const part = (from: number, to: number) => (done: number) =>
      onProgress(start + share * (from + (to - from) * done));
    const report = await normalizeWavFile(from, work('normalized.wav'), {
      ...options,
      onProgress: part(0, ROUND_PARTS.normalized),
      outputFormat: FLOAT_WAV,
    });
    const encoding = shareOfTime(report.output.seconds, part(ROUND_PARTS.normalized, ROUND_PARTS.encoded));
    const checking = shareOfTime(report.output.seconds, part(ROUND_PARTS.encoded, ROUND_PARTS.checked));
    await privateFile(work('encoded'));
    if (output.kind === 'video')
      await replaceSoundtrack(
        ffmpegPath,
        job.inputPath,
        work('normalized.wav'),
        work('encoded'),
        output.ext as VideoContainer,
        encoder,
        streamTypes,
        encoding,
      );
    else
      await encodeAudio(
        ffmpegPath,
        work('normalized.wav'),
        work('encoded'),
        output.ext as AudioContainer,
        encoder,
        { path: job.inputPath, format: job.input.ext },
        encoding,
      );
    // Report what the encoded file holds, measured after decoding it again.
    await privateFile(work('check.wav'));
    await decodeToWav(ffmpegPath, work('encoded'), output.ext, work('check.wav'), {}, checking);
    const delivered: LoudnessMeasurement = await measureWavFile(work('check.wav'), part(ROUND_PARTS.checked, 1));
    onProgress(start + share);
    return { report, delivered };
  };
  const deliver = async (
    report: NormalizeReport,
    delivered: LoudnessMeasurement,
    extra: Partial<EncodedReport> = {},
  ): Promise<EncodedReport> => {
    await rename(work('encoded'), job.outputPath); // into place only when complete
    return {
      ...report,
      output: delivered,
      targetReached: report.targetReached && onTarget(delivered.integratedLufs, target.targetLufs),
      ...extra,
    };
  };

  const first = await round(source, { ...target, maxLimitingDb }, [0, 0.5]);
  const overshootDb = first.delivered.truePeakDbtp - target.ceilingDbtp;
  // Only a target the normalizer reached is chased through the encoder; an unreachable one stays where the bound left it.
  const shiftLu = first.report.targetReached ? target.targetLufs - first.delivered.integratedLufs : 0;
  if (first.report.unchangedBecause !== undefined || (overshootDb <= 0 && Math.abs(shiftLu) <= AIM_LU))
    return deliver(first.report, first.delivered);

  const roomDb = overshootDb > 0 ? encoderRoomDb(target.ceilingDbtp, first.report.output, first.delivered) : 0;
  // What only makes up for the encoder is not counted against the bound: for a target the normalizer reached,
  // the limiting that wins back what the lower ceiling (at most its own dB) and the encoder took off the
  // loudness; for one it did not, the lower ceiling alone (the gain stays where the bound left it).
  const makeUpDb = first.report.targetReached ? LIMITING_PER_LOST_LU * (roomDb + Math.max(0, shiftLu)) : roomDb;
  const second = await round(
    source,
    {
      targetLufs: target.targetLufs + shiftLu,
      ceilingDbtp: target.ceilingDbtp - roomDb,
      maxLimitingDb: maxLimitingDb + makeUpDb,
    },
    [0.5, 0.25],
  );
  const restDb = second.delivered.truePeakDbtp - target.ceilingDbtp;
  if (restDb <= 0) return deliver(second.report, second.delivered, roomDb > 0 ? { encoderRoomDb: roomDb } : {});

  // The last resort: the second round's audio turned down by what is still over (gain only, no more limiting).
  const downDb = restDb + TURN_DOWN_MARGIN_DB;
  await rename(work('normalized.wav'), work('limited.wav'));
  const last = await round(
    work('limited.wav'),
    {
      targetLufs: second.report.output.integratedLufs - downDb,
      // A little above the turned-down peaks: the limiter has nothing left to do.
      ceilingDbtp: second.report.output.truePeakDbtp - downDb + 0.1,
      maxLimitingDb: 0,
    },
    [0.75, 0.25],
  );
  if (last.delivered.truePeakDbtp > target.ceilingDbtp)
    throw new ProcessingError(
      'PROCESSING_FAILED',
      `the ${output.ext.toUpperCase()} encoder kept the true peak over the ${target.ceilingDbtp} dBTP limit (${last.delivered.truePeakDbtp.toFixed(2)} dBTP after 3 encodes: ${roomDb.toFixed(2)} dB of room under the ceiling, then ${downDb.toFixed(2)} dB quieter)`,
    );
  const report = { ...second.report, gainDb: second.report.gainDb - downDb };
  return deliver(report, last.delivered, {
    encoderRoomDb: roomDb,
    turnedDownDb: downDb,
    targetReached: onTarget(last.delivered.integratedLufs, target.targetLufs),
  });
}

/**
 * Where each part of an encoding round ends, as a share of the round (from its time on a lossy output):
 * the normalization's passes, the encode, the decode of what was encoded; measuring it is the rest.
 */
const ROUND_PARTS = { normalized: 0.4, encoded: 0.8, checked: 0.9 } as const;

/** A reporter of ffmpeg's time written (seconds) as a share of `seconds` of audio; none when the length is unknown. */
function shareOfTime(
  seconds: number | undefined,
  report: (share: number) => void,
): ((written: number) => void) | undefined {
  if (!seconds || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return (written) => report(Math.min(1, Math.max(0, written / seconds)));
}

/** How far under the ceiling to set the limiter (dB) so that the encoder's overshoot keeps under it (ENCODER_SPREAD). */
function encoderRoomDb(ceilingDbtp: number, normalized: LoudnessMeasurement, delivered: LoudnessMeasurement): number {
  const amplitude = (db: number) => 10 ** (db / 20);
  const overshootDb = delivered.truePeakDbtp - ceilingDbtp;
  const added = Math.max(0, amplitude(delivered.truePeakDbtp) - amplitude(normalized.truePeakDbtp));
  const left = amplitude(ceilingDbtp) - ENCODER_SPREAD * added;
  const standingOutDb = left > 0 ? ceilingDbtp - 20 * Math.log10(left) : Infinity;
  const growingDb = OVERSHOOT_GROWTH * overshootDb + OVERSHOOT_MARGIN_DB;
  return Math.min(MAX_ENCODER_ROOM_DB, Math.max(standingOutDb, growingDb));
}

/** A normalization as delivered through a lossy encoder. */
interface EncodedReport extends NormalizeReport {
  /** How far under the ceiling the limiter was set for the encoder's overshoot (dB), beyond the bound on limiting. */
  encoderRoomDb?: number;
  /** How much the audio was turned down because the encoder still overshot with that room (dB). */
  turnedDownDb?: number;
}

/**
 * The encoder's arguments for the output: the input's own encoding (probed with ffprobe), with the
 * user's output-encoding choices over it. A choice for an output that turns out lossless (an M4A holding
 * ALAC, a video's PCM soundtrack) is refused here, before any work.
 */
async function planOutputEncoding(job: ProcessJob, output: MediaType, ffmpegPath: string): Promise<EncodingPlan> {
  const video = output.kind === 'video';
  const source = await probeSourceEncoding(ffprobePathFor(ffmpegPath), job.inputPath, job.input.ext, !video);
  const codec = outputCodec(output.ext, source, video);
  const choices: OutputEncodingSettings = Object.fromEntries(
    Object.entries(job.settings).filter(([member, value]) => EXTENSION_OF.has(member) && value !== undefined),
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

/** A WAV input comes back in its own sample format. */
async function sampleFormatOf(path: string): Promise<{ bitsPerSample: number; encoding: 'int' | 'float' }> {
  const file = await open(path, 'r');
  try {
    const { bitsPerSample, encoding } = await readWavLayout(file);
    return { bitsPerSample, encoding };
  } finally {
    await file.close();
  }
}

/**
 * Creates `path` empty and for the engine's account only (600, as every media file): ffmpeg writes into it
 * as it is (-y truncates, keeping the mode), where a file it made would take the umask's 644.
 */
async function privateFile(path: string): Promise<void> {
  await writeFile(path, '', { mode: 0o600 });
}

/** Work files (`output.*`) that an engine stopped mid-job left behind: the job starts over, so they go. */
async function removeLeftovers(outputPath: string): Promise<void> {
  const folder = dirname(outputPath);
  const prefix = `${basename(outputPath)}.`;
  const names = await readdir(folder).catch(() => [] as string[]);
  await Promise.all(
    names.filter((name) => name.startsWith(prefix)).map((name) => rm(join(folder, name), { force: true })),
  );
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

function loudnessParams(
  report: EncodedReport,
  returnedAsItCame: boolean,
  loudnessOnly: boolean,
  target: LoudnessTarget,
): Record<string, unknown> {
  const round = (value: number) => (Number.isFinite(value) ? Math.round(value * 100) / 100 : null);
  return {
    processing: returnedAsItCame
      ? 'none'
      : loudnessOnly
        ? report.unchangedBecause
          ? 'none'
          : 'loudness'
        : report.unchangedBecause
          ? 'speech enhancement'
          : 'speech enhancement, loudness',
    input_loudness_lufs: round(report.input.integratedLufs),
    input_true_peak_dbtp: round(report.input.truePeakDbtp),
    input_loudness_range_lu: round(report.input.loudnessRangeLu),
    output_loudness_lufs: round(report.output.integratedLufs),
    output_true_peak_dbtp: round(report.output.truePeakDbtp),
    output_loudness_range_lu: round(report.output.loudnessRangeLu),
    gain_db: round(report.gainDb),
    limiter_reduction_db: round(report.limiterReductionDb),
    target_reached: report.targetReached,
    ...(report.encoderRoomDb ? { encoder_headroom_db: round(report.encoderRoomDb) } : {}),
    ...(report.input.measuredWhole
      ? {
          loudness_measured_over: `the whole file (${report.input.seconds.toFixed(2)} s): it is shorter than one 400 ms gating block`,
        }
      : {}),
    ...(report.unchangedBecause ? { note: report.unchangedBecause } : {}),
    ...(!report.targetReached && !report.unchangedBecause ? { note: unreachedNote(report, target) } : {}),
  };
}

/** The speech enhancement report when none ran (`why`): the model asked for, and no stage. */
function notApplied(model: string, why: string): Record<string, unknown> {
  return {
    speech_enhancement: {
      model,
      chain: '',
      high_pass: null,
      hum_removal: null,
      noise_reduction: null,
      leveler: null,
      note: `not applied: ${why}`,
    },
  };
}

function unreachedNote(report: EncodedReport, target: LoudnessTarget): string {
  const reached = report.output.integratedLufs.toFixed(1);
  if (report.turnedDownDb)
    return `${target.targetLufs} LUFS is out of reach under the ${target.ceilingDbtp} dBTP limit through this encoder: it overshot the limiter by more than the ${report.encoderRoomDb!.toFixed(2)} dB of room left for it, so the output was turned down ${report.turnedDownDb.toFixed(2)} dB: it is ${reached} LUFS`;
  return `${target.targetLufs} LUFS is out of reach under the ${target.ceilingDbtp} dBTP limit with at most ${target.maxLimitingDb} dB of limiting: the output is ${reached} LUFS`;
}
