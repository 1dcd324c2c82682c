// Extensions: what a service may take beyond the interface (docs/interface.md#output-encoding,
// docs/interface.md#loudness-only). The built-in engine declares the ones it implements, and answers
// them at GET /v2/extensions (docs/interface.md#declared-extensions); a client is told which ones its
// service declares (ClientOptions.extensions), or asks the service once, and refuses a member or value of
// any other before sending, naming it, since a service that does not know it would refuse it, or worse,
// ignore it.

/** The encoding of a lossy output: bitrate, CBR or VBR, sample rate, mono downmix. */
export const OUTPUT_ENCODING = 'output-encoding';

/** `enhancement_model: "LOUDNESS_ONLY"`: loudness normalisation and the true-peak limiter, no speech enhancement. */
export const LOUDNESS_ONLY = 'loudness-only';

/** `trim_pauses_s`: pauses longer than it shortened to it, by the voice activity the chain measures. */
export const TRIM_PAUSES = 'trim-pauses';

/** `dereverb`: room echo taken away (WPE de-reverberation) before noise reduction, at a strength. */
export const DEREVERB = 'dereverb';

/** `outputs`: extra files of one job, each a named step of the media (docs/interface.md#several-outputs). */
export const SEVERAL_OUTPUTS = 'several-outputs';

export type ServiceExtension =
  typeof OUTPUT_ENCODING | typeof LOUDNESS_ONLY | typeof TRIM_PAUSES | typeof SEVERAL_OUTPUTS | typeof DEREVERB;

/** What the built-in engine implements. */
export const ENGINE_EXTENSIONS: readonly ServiceExtension[] = [
  OUTPUT_ENCODING,
  LOUDNESS_ONLY,
  TRIM_PAUSES,
  SEVERAL_OUTPUTS,
  DEREVERB,
];

/**
 * Where a service declares its extensions: `200 {"extensions": [...]}`, no key needed. A service without
 * the route (a 4xx) declares none.
 */
export const EXTENSIONS_PATH = '/v2/extensions';

/** The model value of the loudness-only extension. */
export const LOUDNESS_ONLY_MODEL = 'LOUDNESS_ONLY';

/** The `enhancement_model` values beyond the interface's, by the extension they belong to. */
export const EXTENSION_MODELS = new Map<string, ServiceExtension>([[LOUDNESS_ONLY_MODEL, LOUDNESS_ONLY]]);

export const BITRATE_KBPS = { min: 64, max: 320 } as const;
export const BITRATE_MODES = ['CBR', 'VBR'] as const;
/** Rates every lossy encoder of the engine writes (MP3 takes 16000 to 48000; Opus writes what it is given as 48 kHz). */
export const SAMPLE_RATES_HZ = [16000, 22050, 24000, 32000, 44100, 48000] as const;

export type BitrateMode = (typeof BITRATE_MODES)[number];

/** The `media_enhancement` members of the output-encoding extension, all optional. */
export interface OutputEncodingSettings {
  /** The output's bitrate; default: the input's (a lossless input: the encoder's default). */
  bitrate_kbps?: number;
  /** Constant or variable bitrate; default: the input's mode. */
  bitrate_mode?: BitrateMode;
  /** The output's sample rate; default: the input's. */
  sample_rate_hz?: number;
  /** true: one channel, the mix of all; default false: the input's channels. */
  downmix_mono?: boolean;
}

/** What was encoded, as a media's `enhancement_params.output_encoding` (and each output's) reports it. */
export interface AppliedEncoding {
  codec: string;
  bitrate_mode?: 'CBR' | 'VBR';
  /** The bitrate asked of the encoder (VBR: its average). */
  bitrate_kbps?: number;
  /** VBR by quality: the encoder's quality (LAME's -V, Vorbis' -q). */
  vbr_quality?: number;
  sample_rate_hz?: number;
  channels?: number;
}

/** The longest a pause may stay, in seconds (`trim_pauses_s`): under 0.3 s cuts into the breaths between phrases. */
export const TRIM_PAUSES_S = { min: 0.3, max: 10 } as const;

/** The `media_enhancement` member of the trim-pauses extension. */
export interface TrimPausesSettings {
  /** Pauses longer than this (seconds) are shortened to it; absent: none is. Audio only, with a speech model. */
  trim_pauses_s?: number;
}

/** The de-reverberation's strength (`dereverb`): the percentage of the predicted late reverberation taken away; 0 takes none. */
export const DEREVERB_STRENGTH = { min: 0, max: 100 } as const;

/** The `media_enhancement` member of the dereverb extension. */
export interface DereverbSettings {
  /** Room echo taken away before noise reduction, 1..100 (100: all WPE predicts); absent or 0: none. With a speech model. */
  dereverb?: number;
}

/** Each extension member, by the extension it belongs to. */
export const EXTENSION_OF = new Map<string, ServiceExtension>([
  ['bitrate_kbps', OUTPUT_ENCODING],
  ['bitrate_mode', OUTPUT_ENCODING],
  ['sample_rate_hz', OUTPUT_ENCODING],
  ['downmix_mono', OUTPUT_ENCODING],
  ['trim_pauses_s', TRIM_PAUSES],
  ['dereverb', DEREVERB],
  ['outputs', SEVERAL_OUTPUTS],
]);

/** Whether `member` chooses a lossy output's encoding (those apply to a lossy output only). */
export function isEncodingMember(member: string): boolean {
  return EXTENSION_OF.get(member) === OUTPUT_ENCODING;
}

/** The output formats that keep every sample: the encoding members do not apply to them. */
export const LOSSLESS_AUDIO = ['wav', 'aiff', 'flac'] as const;

/**
 * Whether enhancement settings use any extension: a member of one, or an extension's model value. Only
 * then does a client need to know what its service declares.
 */
export function usesExtension(settings: unknown): boolean {
  if (typeof settings !== 'object' || settings === null) return false;
  return Object.entries(settings).some(
    ([member, value]) =>
      value !== undefined &&
      (EXTENSION_OF.has(member) || (member === 'enhancement_model' && EXTENSION_MODELS.has(value as string))),
  );
}

/** The extension names in a service's declaration (its answer at EXTENSIONS_PATH); none when it is not one. */
export function declaredIn(answer: unknown): string[] {
  const list = (answer as { extensions?: unknown } | null)?.extensions;
  return Array.isArray(list) ? list.filter((name): name is string => typeof name === 'string') : [];
}
