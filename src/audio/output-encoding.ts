// The encoder arguments of a lossy or lossless output: by default the input's own encoding (codec,
// bitrate mode and bitrate, sample rate, channels, bit depth), else what the user chose
// (docs/interface.md#output-encoding).
import { runChild } from './child-runs';
import type { AppliedEncoding, OutputEncodingSettings } from '../contract/extensions';
import type { SourceEncoding } from './source-encoding';

export type { AppliedEncoding };

export interface EncodingPlan {
  /** ffmpeg output arguments for the audio stream (`-c:a ...`). */
  args: string[];
  applied: AppliedEncoding;
}

/** A codec that keeps every sample: bitrate and mode do not apply. */
export function isLossless(codec: string): boolean {
  return codec === 'flac' || codec === 'alac' || codec.startsWith('pcm_');
}

/** The encoder for a codec that ffprobe names, where it differs from the name. */
const ENCODERS: Record<string, string> = { mp3: 'libmp3lame', vorbis: 'libvorbis', opus: 'libopus' };
/** Codecs the engine writes again as they came (a video's soundtrack, an M4A, an Ogg). */
const KEPT_CODECS = new Set(['aac', 'mp3', 'vorbis', 'opus', 'ac3', 'eac3', 'flac', 'alac']);

/** Codecs an M4A holds as they are: ffmpeg's M4A muxer (ipod) refuses others, E-AC-3 among them. */
const M4A_CODECS = new Set(['aac', 'alac', 'ac3']);

/** Whether an M4A can hold `codec` as it is. */
export function m4aHolds(codec: string | undefined): boolean {
  return codec !== undefined && M4A_CODECS.has(codec);
}

/** MP3 bitrates (kbps): MPEG-1 Layer III (32 kHz and up), MPEG-2 and 2.5 (below). */
const MP3_BITRATES = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MP3_LOW_RATE_BITRATES = [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];

/** The encoders' choices when neither the input nor the user gives one (as before encodings were kept). */
const DEFAULT_MP3_VBR_LEVEL = 2;
const DEFAULT_VORBIS_QUALITY = 6;
const DEFAULT_KBPS = { aac: 192, opus: 96, other: 128 } as const;

/**
 * The output codec: the input's when the output container holds it, else the container's usual one.
 * `format` is the output container (`mp3`, `m4a`, `ogg`, `flac`, `mp4`...).
 */
export function outputCodec(format: string, source: SourceEncoding | undefined, video: boolean): string {
  const kept = source && KEPT_CODECS.has(source.codec) ? source.codec : undefined;
  if (video) return kept ?? (source?.codec.startsWith('pcm_') ? source.codec : 'aac');
  switch (format) {
    case 'mp3':
      return 'mp3';
    case 'ogg':
      return kept === 'opus' || kept === 'flac' ? kept : 'vorbis';
    case 'm4a':
      return kept === 'alac' ? 'alac' : 'aac';
    case 'flac':
      return 'flac';
    case 'aiff':
      return 'pcm_s24be';
    default:
      return 'pcm_s24le';
  }
}

/**
 * ffmpeg mixes channels down with coefficients that never add up to more than 1 when it reads integer
 * samples, and with larger ones (0.71 each for stereo to mono) when it reads float: the same audio came out
 * 3 dB louder, its peaks 3 dB higher, from the float WAV of a later round than from the first round's
 * integer WAV, so no measured correction held. Bounded always: a mono mix never peaks above its channels.
 */
const SAME_DOWNMIX_WHATEVER_THE_SAMPLES = ['-rematrix_maxval', '1'];

/**
 * The arguments that encode `codec` as the input was encoded, with the user's choices over it.
 * `vorbisQualityFor` finds the Vorbis quality that gives a nominal bitrate (it runs ffmpeg).
 */
export async function planEncoding(
  codec: string,
  source: SourceEncoding | undefined,
  choices: OutputEncodingSettings,
  vorbisQualityFor: (nominalBps: number, sampleRate: number, channels: number) => Promise<number>,
): Promise<EncodingPlan> {
  const encoder = ENCODERS[codec] ?? codec;
  const channels = choices.downmix_mono ? 1 : source?.channels;
  // Opus files decode at 48 kHz whatever they were made from: its rate is left to the encoder.
  const sampleRate = codec === 'opus' ? undefined : (choices.sample_rate_hz ?? source?.sampleRate);
  const shape = [
    ...(sampleRate ? ['-ar', String(sampleRate)] : []),
    ...(channels ? ['-ac', String(channels), ...SAME_DOWNMIX_WHATEVER_THE_SAMPLES] : []),
  ];
  const applied: AppliedEncoding = {
    codec,
    ...(sampleRate ? { sample_rate_hz: sampleRate } : {}),
    ...(channels ? { channels } : {}),
  };
  if (isLossless(codec)) {
    return { args: ['-c:a', encoder, ...bitDepth(codec, source), ...shape], applied };
  }
  // The input's bitrate and mode stand when it was lossy and the user chose none.
  const lossySource = source && !isLossless(source.codec) ? source : undefined;
  const sourceKbps = lossySource?.bitRate ? Math.round(lossySource.bitRate / 1000) : undefined;
  const mode = choices.bitrate_mode ?? lossySource?.mode ?? (codec === 'aac' ? 'CBR' : undefined);
  const kbps = choices.bitrate_kbps ?? sourceKbps;
  switch (codec) {
    case 'mp3': {
      const vbrLevel = choices.bitrate_kbps === undefined ? lossySource?.lameVbrLevel : undefined;
      if (mode !== 'CBR' && kbps === undefined) {
        // No bitrate to keep (a lossless input) or a LAME file's recorded quality: VBR by quality.
        const level = vbrLevel ?? DEFAULT_MP3_VBR_LEVEL;
        return done(['-q:a', String(level)], { bitrate_mode: 'VBR', vbr_quality: level });
      }
      if (mode === 'VBR' && vbrLevel !== undefined)
        return done(['-q:a', String(vbrLevel)], { bitrate_mode: 'VBR', vbr_quality: vbrLevel });
      const allowed = (sampleRate ?? 44100) < 32000 ? MP3_LOW_RATE_BITRATES : MP3_BITRATES;
      const snapped = nearest(allowed, kbps ?? DEFAULT_KBPS.other);
      // VBR at a bitrate: LAME's average bitrate mode, whose frames vary around it.
      return mode === 'VBR'
        ? done(['-abr', '1', '-b:a', `${snapped}k`], { bitrate_mode: 'VBR', bitrate_kbps: snapped })
        : done(['-b:a', `${snapped}k`], { bitrate_mode: 'CBR', bitrate_kbps: snapped });
    }
    case 'vorbis': {
      if (mode === 'CBR') {
        const rate = kbps ?? DEFAULT_KBPS.other;
        return done(['-b:a', `${rate}k`, '-minrate', `${rate}k`, '-maxrate', `${rate}k`], {
          bitrate_mode: 'CBR',
          bitrate_kbps: rate,
        });
      }
      if (choices.bitrate_kbps !== undefined)
        return done(['-b:a', `${kbps}k`], { bitrate_mode: 'VBR', bitrate_kbps: kbps });
      // A Vorbis file's nominal bitrate follows from its quality: the same quality gives the same bitrate.
      const quality =
        lossySource?.codec === 'vorbis' && lossySource.bitRate
          ? await vorbisQualityFor(lossySource.bitRate, sampleRate ?? lossySource.sampleRate, channels ?? 2)
          : DEFAULT_VORBIS_QUALITY;
      return done(['-q:a', String(quality)], { bitrate_mode: 'VBR', vbr_quality: quality });
    }
    case 'opus': {
      const rate = kbps ?? DEFAULT_KBPS.opus;
      return done(['-b:a', `${rate}k`, '-vbr', mode === 'CBR' ? 'off' : 'on'], {
        bitrate_mode: mode === 'CBR' ? 'CBR' : 'VBR',
        bitrate_kbps: rate,
      });
    }
    default: {
      // AAC, AC-3, E-AC-3: ffmpeg's encoders hold an average bitrate (AAC has no VBR mode worth using).
      const rate = kbps ?? (codec === 'aac' ? DEFAULT_KBPS.aac : DEFAULT_KBPS.other);
      return done(['-b:a', `${rate}k`], { bitrate_mode: mode ?? 'CBR', bitrate_kbps: rate });
    }
  }

  function done(args: string[], rate: AppliedEncoding | Partial<AppliedEncoding>): EncodingPlan {
    return { args: ['-c:a', encoder, ...args, ...shape], applied: { ...applied, ...rate } };
  }
}

/** A FLAC input's bit depth kept: 16 bits as 16, 24 as 24 (the encoder would otherwise pick from the float WAV). */
function bitDepth(codec: string, source: SourceEncoding | undefined): string[] {
  if (codec !== 'flac' || source?.codec !== 'flac') return codec === 'flac' ? ['-sample_fmt', 's32'] : [];
  if (source.sampleFormat === 's16') return ['-sample_fmt', 's16'];
  return ['-sample_fmt', 's32', '-bits_per_raw_sample', String(source.bitsPerRawSample ?? 24)];
}

function nearest(values: readonly number[], target: number): number {
  return values.reduce((best, value) => (Math.abs(value - target) < Math.abs(best - target) ? value : best));
}

/** Vorbis qualities searched between, and how finely (the nominal bitrate is steady within 0.05). */
const VORBIS_QUALITY = { min: -1, max: 10, steps: 8 } as const;

/**
 * The libvorbis quality whose nominal bitrate is `nominalBps` at this rate and channel count, found by
 * encoding a twentieth of a second of silence at each step of a bisection and reading the bitrate its
 * identification header declares.
 */
export async function vorbisQualityFor(
  ffmpegPath: string,
  nominalBps: number,
  sampleRate: number,
  channels: number,
): Promise<number> {
  let low: number = VORBIS_QUALITY.min;
  let high: number = VORBIS_QUALITY.max;
  for (let step = 0; step < VORBIS_QUALITY.steps; step++) {
    const middle = (low + high) / 2;
    if ((await vorbisNominalBitrate(ffmpegPath, middle, sampleRate, channels)) < nominalBps) low = middle;
    else high = middle;
  }
  return Math.round(((low + high) / 2) * 100) / 100;
}

async function vorbisNominalBitrate(ffmpegPath: string, quality: number, sampleRate: number, channels: number) {
  const { stdout } = await runChild(ffmpegPath, [
    ...['-nostdin', '-v', 'error', '-f', 'lavfi', '-i', `anullsrc=r=${sampleRate}`, '-t', '0.05'],
    ...['-ac', String(channels), '-c:a', 'libvorbis', '-q:a', String(quality), '-f', 'ogg', '-'],
  ]);
  // The identification header: "\x01vorbis", version, channels, rate, then maximum, nominal, minimum bitrates.
  const at = stdout.indexOf('\x01vorbis');
  if (at < 0) throw new Error('libvorbis wrote no identification header');
  return stdout.readInt32LE(at + 7 + 4 + 1 + 4 + 4);
}
