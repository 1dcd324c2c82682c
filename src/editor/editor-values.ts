// The bounds, choices and defaults the editor's dialogs show and check, taken from the contract and from
// the node and client code that applies them, so that no dialog holds a copy of its own.
import { MAX_TIMER_MS } from '../client/clock';
import { resolveOptions } from '../client/options';
import { DEFAULT_RATE_LIMITS } from '../contract/endpoints';
import {
  DEFAULT_STEP,
  LOUDNESS_TARGET,
  OUTPUT_NAME,
  OUTPUTS_COUNT,
  RESERVED_OUTPUT_NAMES,
  MODELS,
  SETTINGS_MODELS,
  SETTINGS_DEFAULTS,
  STEPS,
  TRANSCODE_KINDS,
  TRUE_PEAK,
  V1_ENHANCEMENT_LEVEL,
  V2_ENHANCEMENT_LEVEL,
} from '../contract/fields';
import { BITRATE_KBPS, BITRATE_MODES, SAMPLE_RATES_HZ, TRIM_PAUSES_S } from '../contract/extensions';
import { DEFAULT_IF_EXISTS, IF_EXISTS } from '../client/final-name';
import { LIMIT_FIELDS } from '../nodes/config-options';
import { DOWNLOAD_SWITCH_DEFAULTS } from '../nodes/download-settings';
import { MAX_CROSSFADE_SECONDS } from '../nodes/episode-parts';
import { DEFAULT_SETTLE_SECONDS, MAX_SETTLE_SECONDS } from '../nodes/file-settle';
import {
  BACKLOG_MS,
  DEFAULT_BACKLOG_MS,
  DEFAULT_GAP_SECONDS,
  DEFAULT_MAX_STREAMS,
  GAP_SECONDS,
  LEVEL,
  MAX_STREAMS,
} from '../nodes/stream-settings';
import { STREAM_MODELS } from '../stream/live-stream';
import { DEFAULT_FORMAT, ENCODINGS, STREAM_CHANNELS, STREAM_RATE } from '../stream/pcm-format';
import type { Bounds, OutputRules, TogetherRule } from './validators';
import { REQUEST_RULES } from '../contract/settings-combinations';
import { UPLOAD_FIELDS } from '../nodes/enhancement-fields';
import { DEFAULT_SEND_FILES, SEND_FILES } from '../nodes/files-message';
import { DEFAULT_FILES_CHOICE, FILES_CHOICES } from '../nodes/files-choice';
import { PATTERN_PLACEHOLDERS } from '../nodes/output-list';

/** The choices of each setting that has a fixed few, by the setting. */
export interface Choices {
  models: string[];
  settingsModels: string[];
  transcodeKinds: string[];
  steps: string[];
  ifExists: string[];
  bitrateModes: string[];
  sampleRates: string[];
  sendFiles: string[];
  files: string[];
}

export interface EditorValues {
  bounds: {
    loudnessTarget: Bounds;
    truePeak: Bounds;
    /** enhance audio (v1): a fraction. */
    v1EnhancementLevel: Bounds;
    /** enhance video, upload, enhance file (v2): a percentage. */
    v2EnhancementLevel: Bounds;
    /** upload, enhance file: a lossy output's bitrate (the output-encoding extension). */
    bitrateKbps: Bounds;
    /** upload, enhance file: the longest pause kept, in seconds (the trim-pauses extension). */
    trimPausesS: Bounds;
  };
  /** The longest timeout, in seconds, that a timer holds. */
  maxTimeoutSeconds: number;
  /** "Wait for the file to settle" (enhance file, upload): its default and largest value. */
  settleSeconds: { default: number; max: number };
  /** Enhance file's crossfade between the intro, the episode and the outro: its largest value (seconds). */
  crossfadeSeconds: { max: number };
  /** Enhance file's further outputs: the contract's rules for each row (the several-outputs extension). */
  outputRules: OutputRules;
  /** Upload and enhance file: the contract's rules of settings that cannot apply together, by property. */
  togetherRules: TogetherRule[];
  /** In the contract's order, the order in which the checks name them. */
  enums: Choices;
  /** In the order the dialogs list them: the fullest model (the default) first, WAV before MP3. */
  menus: Choices;
  /**
   * Each default as the editor writes it (a string, as a text field holds it): a new node's value, or what
   * an empty field means (its placeholder). Keyed by bound or enum name, and by the config node's property.
   */
  defaults: Record<string, string>;
  /** A new node's checkboxes, as the runtime reads a node saved without them. */
  switches: { attachLoudness: boolean };
  /** enhance stream: its models, formats, and the bounds and defaults of its settings. */
  stream: {
    models: string[];
    encodings: string[];
    channels: string[];
    rate: Bounds;
    level: Bounds;
    gapSeconds: Bounds;
    backlogMs: Bounds;
    maxStreams: Bounds;
    defaults: {
      model: string;
      rate: number;
      channels: number;
      encoding: string;
      level: number;
      gapSeconds: number;
      backlogMs: number;
      maxStreams: number;
    };
  };
}

export function editorValues(): EditorValues {
  // What the client uses when the config node leaves the request timeout empty.
  const client = resolveOptions({ baseUrl: 'http://127.0.0.1', apiKey: 'none' });
  const limitPlaceholders = LIMIT_FIELDS.flatMap(({ endpoint, prop }): [string, string][] => {
    const limit = DEFAULT_RATE_LIMITS[endpoint];
    return limit === null ? [] : [[prop, String(limit)]];
  });
  return {
    bounds: {
      loudnessTarget: { ...LOUDNESS_TARGET },
      truePeak: { ...TRUE_PEAK },
      v1EnhancementLevel: { ...V1_ENHANCEMENT_LEVEL },
      v2EnhancementLevel: { ...V2_ENHANCEMENT_LEVEL },
      bitrateKbps: { ...BITRATE_KBPS },
      trimPausesS: { ...TRIM_PAUSES_S },
    },
    maxTimeoutSeconds: Math.floor(MAX_TIMER_MS / 1000),
    settleSeconds: { default: DEFAULT_SETTLE_SECONDS, max: MAX_SETTLE_SECONDS },
    crossfadeSeconds: { max: MAX_CROSSFADE_SECONDS },
    outputRules: {
      max: OUTPUTS_COUNT.max,
      nameMaxLength: OUTPUT_NAME.maxLength,
      namePattern: OUTPUT_NAME.pattern.source,
      reserved: [...RESERVED_OUTPUT_NAMES],
      transcodeKinds: [...TRANSCODE_KINDS],
      bitrateKbps: { ...BITRATE_KBPS },
      bitrateModes: [...BITRATE_MODES],
      sampleRates: SAMPLE_RATES_HZ.map(String),
      placeholders: [...PATTERN_PLACEHOLDERS],
    },
    togetherRules: togetherRules(),
    enums: {
      models: [...MODELS],
      settingsModels: [...SETTINGS_MODELS],
      transcodeKinds: [...TRANSCODE_KINDS],
      steps: [...STEPS],
      ifExists: [...IF_EXISTS],
      bitrateModes: [...BITRATE_MODES],
      sampleRates: SAMPLE_RATES_HZ.map(String),
      sendFiles: [...SEND_FILES],
      files: [...FILES_CHOICES],
    },
    menus: {
      models: [...MODELS].reverse(),
      // The upload and video settings also take the built-in engine's LOUDNESS_ONLY, listed after the models.
      settingsModels: [...(MODELS as readonly string[])].reverse().concat(SETTINGS_MODELS.slice(MODELS.length)),
      transcodeKinds: [...TRANSCODE_KINDS].reverse(),
      steps: [...STEPS],
      // The default (a numbered name) first.
      ifExists: [...IF_EXISTS],
      bitrateModes: [...BITRATE_MODES],
      sampleRates: SAMPLE_RATES_HZ.map(String),
      sendFiles: [...SEND_FILES],
      files: [...FILES_CHOICES],
    },
    defaults: {
      loudnessTarget: String(SETTINGS_DEFAULTS.loudness_target),
      truePeak: String(SETTINGS_DEFAULTS.true_peak),
      // v1 takes the same level as a fraction of the v2 percentage.
      v1EnhancementLevel: String(SETTINGS_DEFAULTS.enhancement_level / 100),
      v2EnhancementLevel: String(SETTINGS_DEFAULTS.enhancement_level),
      model: SETTINGS_DEFAULTS.enhancement_model,
      step: DEFAULT_STEP,
      ifExists: DEFAULT_IF_EXISTS,
      sendFiles: DEFAULT_SEND_FILES,
      files: DEFAULT_FILES_CHOICE,
      ...Object.fromEntries(limitPlaceholders),
      requestTimeout: String(client.requestTimeoutMs / 1000),
    },
    switches: { ...DOWNLOAD_SWITCH_DEFAULTS },
    stream: {
      models: [...STREAM_MODELS],
      encodings: [...ENCODINGS],
      channels: STREAM_CHANNELS.map(String),
      rate: { ...STREAM_RATE },
      level: { ...LEVEL },
      gapSeconds: { ...GAP_SECONDS },
      backlogMs: { ...BACKLOG_MS },
      maxStreams: { ...MAX_STREAMS },
      defaults: {
        model: STREAM_MODELS[0],
        ...DEFAULT_FORMAT,
        level: LEVEL.max,
        gapSeconds: DEFAULT_GAP_SECONDS,
        backlogMs: DEFAULT_BACKLOG_MS,
        maxStreams: DEFAULT_MAX_STREAMS,
      },
    },
  };
}

/** The contract's REQUEST_RULES as the upload and enhance file dialogs hold them: by property, as text. */
function togetherRules(): TogetherRule[] {
  const propOf = (member: string) => UPLOAD_FIELDS.find((field) => field.member === member)?.prop;
  return REQUEST_RULES.map((rule) => ({
    props: rule.members.map(propOf).filter((prop): prop is string => prop !== undefined),
    whenProp: propOf(rule.when.member) ?? rule.when.member,
    whenValues: rule.when.values.map(String),
    asksNothing: rule.asksNothing.map(String),
    msg: rule.msg,
  }));
}
