// The field rules of the service interface (docs/interface.md#fields-and-bounds), written once: the
// bounds and choices, each request's table of members and their checks (value-checks.ts).
// The client checks a request with them before sending it; the local engine answers 422 with them.
// Both therefore speak the same FastAPI-style issue: {loc, msg, type} plus the offending input
// (field-issue.ts).
import {
  type AppliedEncoding,
  BITRATE_KBPS,
  BITRATE_MODES,
  ENGINE_EXTENSIONS,
  EXTENSION_MODELS,
  EXTENSION_OF,
  isEncodingMember,
  OUTPUT_ENCODING,
  SAMPLE_RATES_HZ,
  TRIM_PAUSES_S,
  type LOUDNESS_ONLY_MODEL,
  type OutputEncodingSettings,
  type TrimPausesSettings,
  DEREVERB_STRENGTH,
  type DereverbSettings,
} from './extensions';
import type { FieldIssue, Loc } from './field-issue';
import { checkSettingsTogether } from './settings-combinations';
import {
  aBoolean,
  aList,
  aString,
  httpUrl,
  integerIn,
  isPlainObject,
  nullOr,
  numberIn,
  numberOneOf,
  oneOf,
  type Check,
} from './value-checks';

export const MODELS = ['FINCH', 'LARK', 'LARK_V2'] as const;
export const TRANSCODE_KINDS = ['MP3', 'WAV'] as const;
export const STEPS = ['ENHANCED', 'PRE'] as const;

/**
 * `enhancement_model` in `media_enhancement` / `video_enhancement`: the interface's models and the values
 * of extensions (LOUDNESS_ONLY, for a service that declares it). v1's `model_arch` takes MODELS only.
 */
export const SETTINGS_MODELS = [...MODELS, ...EXTENSION_MODELS.keys()] as readonly string[];

export type Model = (typeof MODELS)[number];
/** What `enhancement_model` may name: a model of the interface, or LOUDNESS_ONLY where a service declares it. */
export type SettingsModel = Model | typeof LOUDNESS_ONLY_MODEL;
export type TranscodeKind = (typeof TRANSCODE_KINDS)[number];
export type Step = (typeof STEPS)[number];

/** The file a download gets when it names no step. */
export const DEFAULT_STEP: Step = 'ENHANCED';

/**
 * The several-outputs extension (docs/interface.md#several-outputs): `outputs` lists the files a job
 * writes beyond the first (the ENHANCED step), each a named step of the media.
 */
export const OUTPUTS_COUNT = { min: 1, max: 4 } as const;
/** An output's name: what `?step=` asks for it by, and the end of its file's name (`<stem>_<name>.<ext>`). */
export const OUTPUT_NAME = { maxLength: 32, pattern: /^[a-z0-9][a-z0-9_-]*$/ } as const;
/** Names an output may not take: they would read as the interface's steps. */
export const RESERVED_OUTPUT_NAMES = ['enhanced', 'pre'] as const;

/** One extra output: its name and its encoding (absent `transcode`: the input's, a video's soundtrack alone). */
export interface OutputSettings extends OutputEncodingSettings {
  name: string;
  transcode?: TranscodeKind;
}

/**
 * One output of a COMPLETED media as its metadata echoes it (`enhancement_params.outputs`): its name (the
 * step it is downloaded by), the file name it is served under, its encoding (none for a WAV) and loudness.
 */
export interface AppliedOutput {
  name: string;
  file_name: string;
  output_encoding?: AppliedEncoding;
  output_loudness_lufs?: number | null;
  output_true_peak_dbtp?: number | null;
  target_reached?: boolean;
}

/**
 * The outputs a media's metadata lists once COMPLETED (a service's answer, so each checked): those with a
 * well-formed name and a file name; none when it lists none, or only the outputs as asked (no file name yet).
 */
export function appliedOutputsOf(metadata: unknown): AppliedOutput[] {
  const params = (metadata as { enhancement_params?: { outputs?: unknown } } | null)?.enhancement_params;
  const listed = Array.isArray(params?.outputs) ? (params.outputs as unknown[]) : [];
  return listed.filter(
    (output): output is AppliedOutput =>
      isPlainObject(output) && typeof output.file_name === 'string' && outputName(output.name, ['name']) === undefined,
  );
}

/** What `?step=` may name: a step of the interface, or the name of one of the media's outputs. */
export type DownloadStep = Step | (string & {});

export const LOUDNESS_TARGET = { min: -70, max: -5 } as const; // LUFS
export const TRUE_PEAK = { min: -9, max: 0 } as const; // dBTP
export const V1_ENHANCEMENT_LEVEL = { min: 0, max: 1 } as const; // a fraction in enhance-json
export const V2_ENHANCEMENT_LEVEL = { min: 1, max: 100 } as const; // a percentage in the v2/video parts
export const URL_LENGTH = { min: 1, max: 2083 } as const;

/** Body of POST /v1/media/enhance-json. Every member is required; transcode_kind may be null but must be present. */
export interface EnhanceJsonBody {
  file_download_url: string;
  file_name: string;
  loudness_target_level: number;
  loudness_peak_limit: number;
  enhancement_level: number;
  transcode_kind: TranscodeKind | null;
  model_arch: Model;
}

/**
 * The `media_enhancement` (v2) or `video_enhancement` (v1 video) JSON part. Every member is optional.
 * The output-encoding members are an extension of the built-in engine, in `media_enhancement` only.
 */
export interface EnhancementSettings extends OutputEncodingSettings, TrimPausesSettings, DereverbSettings {
  loudness_target?: number;
  true_peak?: number;
  enhancement_level?: number;
  /** A Model, or an extension's value such as LOUDNESS_ONLY. */
  enhancement_model?: SettingsModel;
  /** v2 uploads only. */
  transcode?: TranscodeKind;
  /** The several-outputs extension: the files written beyond the ENHANCED one, 1 to 4. */
  outputs?: OutputSettings[];
}

/** What the service applies when a v2/video member is missing (docs/interface.md#fields-and-bounds). */
export const SETTINGS_DEFAULTS = {
  loudness_target: -16,
  true_peak: -1,
  enhancement_level: 100,
  enhancement_model: 'LARK_V2' as Model,
};

// Rules are looked up by names the caller chooses, so in Maps: a member called `constructor`,
// `valueOf` or `__proto__` must find no rule, not one of Object.prototype's functions.
const ENHANCE_JSON_RULES = new Map<string, Check>([
  ['file_download_url', httpUrl(URL_LENGTH)],
  ['file_name', aString],
  ['loudness_target_level', integerIn(LOUDNESS_TARGET.min, LOUDNESS_TARGET.max)],
  ['loudness_peak_limit', integerIn(TRUE_PEAK.min, TRUE_PEAK.max)],
  ['enhancement_level', numberIn(V1_ENHANCEMENT_LEVEL.min, V1_ENHANCEMENT_LEVEL.max)],
  ['transcode_kind', nullOr(oneOf(TRANSCODE_KINDS))],
  ['model_arch', oneOf(MODELS)],
] satisfies [keyof EnhanceJsonBody, Check][]);

const SETTINGS_RULES = new Map<string, Check>([
  ['loudness_target', integerIn(LOUDNESS_TARGET.min, LOUDNESS_TARGET.max)],
  ['true_peak', integerIn(TRUE_PEAK.min, TRUE_PEAK.max)],
  ['enhancement_level', integerIn(V2_ENHANCEMENT_LEVEL.min, V2_ENHANCEMENT_LEVEL.max)],
  ['enhancement_model', oneOf(SETTINGS_MODELS)],
  ['transcode', oneOf(TRANSCODE_KINDS)],
  ['bitrate_kbps', integerIn(BITRATE_KBPS.min, BITRATE_KBPS.max)],
  ['bitrate_mode', oneOf(BITRATE_MODES)],
  ['sample_rate_hz', numberOneOf(SAMPLE_RATES_HZ)],
  ['downmix_mono', aBoolean],
  ['trim_pauses_s', numberIn(TRIM_PAUSES_S.min, TRIM_PAUSES_S.max)],
  ['dereverb', integerIn(DEREVERB_STRENGTH.min, DEREVERB_STRENGTH.max)],
] satisfies [keyof EnhancementSettings, Check][]);

/** The members of one output, each checked as the same member of the settings is. */
const OUTPUT_RULES = new Map<string, Check>([
  ['name', outputName],
  ...(['transcode', 'bitrate_kbps', 'bitrate_mode', 'sample_rate_hz', 'downmix_mono'] as const).map(
    (member): [keyof OutputSettings, Check] => [member, SETTINGS_RULES.get(member)!],
  ),
] satisfies [keyof OutputSettings, Check][]);

/** Members `video_enhancement` takes beyond the interface's: a video may have extra outputs (its soundtrack). */
const VIDEO_EXTENSION_MEMBERS = ['outputs'];

/** Whether a further output may take this name (the several-outputs extension's rule: not a step's name). */
export function isFurtherOutputName(value: unknown): value is string {
  return outputName(value, []) === undefined;
}

function outputName(value: unknown, loc: Loc): FieldIssue | undefined {
  if (typeof value !== 'string') return { loc, msg: 'str type expected', type: 'type_error.str', input: value };
  if (value.length < 1 || value.length > OUTPUT_NAME.maxLength)
    return {
      loc,
      msg: `ensure this value has between 1 and ${OUTPUT_NAME.maxLength} characters`,
      type: 'value_error.any_str.length',
      input: value,
    };
  if (!OUTPUT_NAME.pattern.test(value))
    return {
      loc,
      msg: `string does not match regex "${OUTPUT_NAME.pattern.source}" (lower-case letters, digits, "_" and "-", starting with a letter or digit)`,
      type: 'value_error.str.regex',
      input: value,
    };
  if ((RESERVED_OUTPUT_NAMES as readonly string[]).includes(value))
    return {
      loc,
      msg: `"${value}" is the name of the interface's ${value.toUpperCase()} step; choose another name`,
      type: 'value_error.reserved_name',
      input: value,
    };
  return undefined;
}

/** Issues of an enhance-json body; an empty array means it is valid. */
export function checkEnhanceJsonBody(body: unknown): FieldIssue[] {
  if (!isPlainObject(body))
    return [{ loc: ['body'], msg: 'value is not a valid dict', type: 'type_error.dict', input: body }];
  const issues: FieldIssue[] = [];
  for (const [field, check] of ENHANCE_JSON_RULES) {
    const loc = ['body', field];
    if (!Object.hasOwn(body, field) || body[field] === undefined) {
      issues.push({ loc, msg: 'field required', type: 'value_error.missing' });
      continue;
    }
    const issue = check(body[field], loc);
    if (issue) issues.push(issue);
  }
  for (const field of Object.keys(body)) {
    if (!ENHANCE_JSON_RULES.has(field))
      issues.push({
        loc: ['body', field],
        msg: 'extra fields not permitted',
        type: 'value_error.extra',
        input: body[field],
      });
  }
  return issues;
}

/**
 * Issues of a `media_enhancement` / `video_enhancement` object. `null` or absent means "all defaults".
 * `transcode` and the extension members are members of the v2 upload settings only; an extension member
 * is refused unless its extension is in `offered` (what the service declares; the built-in engine's by default).
 */
export function checkEnhancementSettings(
  settings: unknown,
  part: 'media_enhancement' | 'video_enhancement',
  offered: readonly string[] = ENGINE_EXTENSIONS,
): FieldIssue[] {
  if (settings === undefined || settings === null) return [];
  if (!isPlainObject(settings))
    return [{ loc: ['body', part], msg: 'value is not a valid dict', type: 'type_error.dict', input: settings }];
  const issues: FieldIssue[] = [];
  const uploadOnly = part === 'media_enhancement';
  for (const [member, value] of Object.entries(settings)) {
    const loc = ['body', part, member];
    const check = member === 'outputs' ? aList : SETTINGS_RULES.get(member);
    const extension = EXTENSION_OF.get(member);
    const uploadMember = member === 'transcode' || (extension && !VIDEO_EXTENSION_MEMBERS.includes(member));
    if (!check || (uploadMember && !uploadOnly)) {
      issues.push({ loc, msg: 'extra fields not permitted', type: 'value_error.extra', input: value });
      continue;
    }
    if (value === undefined) continue;
    if (extension && !offered.includes(extension)) {
      issues.push({
        loc,
        msg: `a member of the built-in engine's "${extension}" extension, which this service does not declare (it would refuse or ignore it); leave it out, or use the built-in engine`,
        type: 'value_error.extension',
        input: value,
      });
      continue;
    }
    const modelExtension = member === 'enhancement_model' ? EXTENSION_MODELS.get(value as string) : undefined;
    if (modelExtension && !offered.includes(modelExtension)) {
      issues.push({
        loc,
        msg: `a value of the built-in engine's "${modelExtension}" extension, which this service does not declare (it would refuse it or enhance the speech anyway); permitted: ${MODELS.join(', ')}, or use the built-in engine`,
        type: 'value_error.extension',
        input: value,
      });
      continue;
    }
    const issue = check(value, loc);
    if (issue) issues.push(issue);
    else if (member === 'outputs') issues.push(...checkOutputs(value as unknown[], loc, offered));
  }
  // Then the members that cannot apply together (settings-combinations.ts), each one that passed its own check.
  const skip = issues.map((issue) => issue.loc);
  return [...issues, ...checkSettingsTogether(settings, part, skip)];
}

/** Issues of the `outputs` list: its length, and each output's members, names unique. */
function checkOutputs(outputs: unknown[], loc: Loc, offered: readonly string[]): FieldIssue[] {
  if (outputs.length < OUTPUTS_COUNT.min || outputs.length > OUTPUTS_COUNT.max)
    return [
      {
        loc,
        msg: `ensure this list has from ${OUTPUTS_COUNT.min} to ${OUTPUTS_COUNT.max} items (the outputs beyond the ENHANCED file)`,
        type: outputs.length < OUTPUTS_COUNT.min ? 'value_error.list.min_items' : 'value_error.list.max_items',
        input: outputs,
      },
    ];
  const issues: FieldIssue[] = [];
  const seen = new Set<unknown>();
  outputs.forEach((output, index) => {
    const at = [...loc, index];
    if (!isPlainObject(output)) {
      issues.push({ loc: at, msg: 'value is not a valid dict', type: 'type_error.dict', input: output });
      return;
    }
    if (!Object.hasOwn(output, 'name') || output.name === undefined)
      issues.push({ loc: [...at, 'name'], msg: 'field required', type: 'value_error.missing' });
    for (const [member, value] of Object.entries(output)) {
      const memberLoc = [...at, member];
      const check = OUTPUT_RULES.get(member);
      if (!check) {
        issues.push({ loc: memberLoc, msg: 'extra fields not permitted', type: 'value_error.extra', input: value });
        continue;
      }
      if (value === undefined) continue;
      if (isEncodingMember(member) && !offered.includes(OUTPUT_ENCODING)) {
        issues.push({
          loc: memberLoc,
          msg: `a member of the built-in engine's "${OUTPUT_ENCODING}" extension, which this service does not declare (it would refuse or ignore it); leave it out, or use the built-in engine`,
          type: 'value_error.extension',
          input: value,
        });
        continue;
      }
      const issue = check(value, memberLoc);
      if (issue) issues.push(issue);
      else if (member === 'name' && seen.has(value))
        issues.push({
          loc: memberLoc,
          msg: 'an earlier output has this name; each output needs its own',
          type: 'value_error.duplicate_name',
          input: value,
        });
      if (member === 'name') seen.add(value);
    }
  });
  return issues;
}

/**
 * Issues of the download `step` query parameter: a step of the interface, or the name of an output (the
 * several-outputs extension); undefined means the default, ENHANCED.
 */
export function checkStep(step: unknown): FieldIssue[] {
  if (step === undefined || (STEPS as readonly unknown[]).includes(step)) return [];
  const loc = ['query', 'step'];
  const issue = outputName(step, loc);
  if (!issue) return [];
  return [
    {
      ...issue,
      msg: `${issue.msg}; permitted: ${STEPS.map((s) => `'${s}'`).join(', ')}, or the name of one of the media's outputs (several-outputs)`,
    },
  ];
}

/** Whether a (well-formed) step names one of the media's extra outputs rather than an interface step. */
export function isOutputStep(step: DownloadStep | undefined): boolean {
  return step !== undefined && !(STEPS as readonly string[]).includes(step);
}

/** Issues of a media uid used in a path. It must be a non-empty string of at most 200 characters. */
export function checkMediaUid(uid: unknown): FieldIssue[] {
  const loc = ['path', 'media_uid'];
  if (typeof uid !== 'string') return [{ loc, msg: 'str type expected', type: 'type_error.str', input: uid }];
  if (uid.length < 1 || uid.length > 200) {
    return [
      {
        loc,
        msg: 'ensure this value has between 1 and 200 characters',
        type: 'value_error.any_str.length',
        input: uid,
      },
    ];
  }
  // In a URL path `.` and `..` are not names: `/v2/medias/..` would ask for `/v2/file`.
  if (uid === '.' || uid === '..')
    return [{ loc, msg: 'must not be "." or ".." (a URL path resolves them away)', type: 'value_error', input: uid }];
  return [];
}
