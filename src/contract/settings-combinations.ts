// Settings that cannot apply together, or to the file sent: each rule one row. The rows a request decides
// alone (REQUEST_RULES, data, so the editor's dialogs carry them too) run in checkEnhancementSettings
// (fields.ts): the client and the nodes refuse them before sending, the engine answers them 422. The rows
// that depend on the file (INPUT_RULES) run in the engine's upload route once its type is sniffed, before
// anything is kept. Either way the answer is a 422 naming the member, its value and the rule, never a
// FAILED media; the processor's last guard reads the same rows.
import { EXTENSION_OF, isEncodingMember, LOSSLESS_AUDIO, LOUDNESS_ONLY_MODEL } from './extensions';
import type { FieldIssue, Loc } from './field-issue';
import { isPlainObject } from './value-checks';

/** What the engine knows of a file once its first bytes are sniffed. */
export interface InputKind {
  kind: 'audio' | 'video';
  ext: string;
}

interface RuleRow {
  /** The members it refuses. */
  members: readonly string[];
  /** Whether it holds for the members of each further output too (`outputs`). */
  inOutputs: boolean;
  /** Values that ask for nothing (a default: `downmix_mono: false`), kept whatever the rule. */
  asksNothing: readonly unknown[];
  /** The issue's type. */
  type: string;
}

/** A rule the request decides alone: the member cannot apply while another member has one of `values`. */
export interface RequestRule extends RuleRow {
  when: {
    member: string;
    values: readonly unknown[];
    /** Read in the object holding the member (an output's own `transcode`), or in the settings. */
    of: 'own' | 'settings';
  };
  /** The rule, as the issue's msg. */
  msg: string;
}

/** A rule that waits for the file: why the member cannot apply to it, or undefined when it can. */
interface InputRule extends RuleRow {
  refusal: (own: Record<string, unknown>, input: InputKind) => string | undefined;
}

const ENCODING_MEMBERS = [...EXTENSION_OF.keys()].filter(isEncodingMember);

function lossyOnly(why: string): string {
  return `applies to a lossy output only (MP3, AAC, Vorbis, Opus); ${why}, which is lossless: ask transcode MP3, or leave it out`;
}

/** The rule of a member that works in the speech enhancement chain, which LOUDNESS_ONLY runs none of. */
function speechModelOnly(what: string): Pick<RequestRule, 'when' | 'msg' | 'type' | 'inOutputs'> {
  return {
    when: { member: 'enhancement_model', values: [LOUDNESS_ONLY_MODEL], of: 'settings' },
    msg: `${what}, and ${LOUDNESS_ONLY_MODEL} runs no speech model: choose FINCH, LARK or LARK_V2, or leave it out`,
    type: 'value_error.speech_model_only',
    inOutputs: false,
  };
}

/**
 * A further member that works in the speech chain is one more row: its members, the values that ask for
 * nothing (a strength of 0), and `...speechModelOnly('what it does')`.
 */
export const REQUEST_RULES: readonly RequestRule[] = [
  {
    members: ENCODING_MEMBERS,
    inOutputs: true,
    asksNothing: [false],
    when: { member: 'transcode', values: ['WAV'], of: 'own' },
    msg: lossyOnly('transcode WAV'),
    type: 'value_error.lossless_output',
  },
  {
    members: ['trim_pauses_s'],
    asksNothing: [],
    ...speechModelOnly('finds pauses by the voice activity a speech model measures'),
  },
  {
    members: ['dereverb'],
    // 0 asks for nothing; false is the dialogs' tick box unticked (the member itself is a number).
    asksNothing: [0, false],
    ...speechModelOnly('reduces room echo in the speech enhancement chain'),
  },
];

const INPUT_RULES: readonly InputRule[] = [
  {
    members: ENCODING_MEMBERS,
    inOutputs: true,
    asksNothing: [false],
    // A WAV, AIFF or FLAC that is not transcoded stays as it is.
    refusal: (own, input) =>
      !own.transcode && input.kind === 'audio' && (LOSSLESS_AUDIO as readonly string[]).includes(input.ext)
        ? lossyOnly(`the input is ${input.ext.toUpperCase()}, kept as it is`)
        : undefined,
    type: 'value_error.lossless_output',
  },
  {
    members: ['trim_pauses_s'],
    inOutputs: false,
    asksNothing: [],
    refusal: (_, input) =>
      input.kind === 'video'
        ? `applies to audio only; this ${input.ext.toUpperCase()} video's soundtrack keeps its length with the picture: leave it out, or send the soundtrack alone`
        : undefined,
    type: 'value_error.audio_only',
  },
];

/**
 * Issues of the rules the request decides alone, for `settings` whose members passed their own checks:
 * a member at a loc in `skip` (it has an issue of its own) is left out.
 */
export function checkSettingsTogether(
  settings: object,
  part: 'media_enhancement' | 'video_enhancement',
  skip: readonly Loc[] = [],
): FieldIssue[] {
  return issuesOf(settings, part, skip, (member, value, { own, whole, inOutput }) => {
    const rule = REQUEST_RULES.find((row) => applies(row, member, value, inOutput) && refusedBy(row, own, whole));
    return rule && { msg: rule.msg, type: rule.type };
  });
}

/**
 * Issues of the rules that depend on the file, once its type is known (the engine's upload route, after
 * sniffing): a bitrate for a FLAC kept FLAC, a trim of a video.
 */
export function checkSettingsForInput(
  settings: object,
  part: 'media_enhancement' | 'video_enhancement',
  input: InputKind,
): FieldIssue[] {
  return issuesOf(settings, part, [], (member, value, { own, inOutput }) => {
    for (const rule of INPUT_RULES) {
      const msg = applies(rule, member, value, inOutput) ? rule.refusal(own, input) : undefined;
      if (msg !== undefined) return { msg, type: rule.type };
    }
    return undefined;
  });
}

function applies(rule: RuleRow, member: string, value: unknown, inOutput: boolean): boolean {
  return rule.members.includes(member) && (!inOutput || rule.inOutputs) && !rule.asksNothing.includes(value);
}

function refusedBy(rule: RequestRule, own: Record<string, unknown>, settings: Record<string, unknown>): boolean {
  const holder = rule.when.of === 'own' ? own : settings;
  return rule.when.values.includes(holder[rule.when.member]);
}

/** Where a member is: the object holding it (the settings, or one further output), and the settings. */
interface Place {
  own: Record<string, unknown>;
  whole: Record<string, unknown>;
  inOutput: boolean;
}

type Refusal = (member: string, value: unknown, place: Place) => { msg: string; type: string } | undefined;

/** Each member of the settings and of each further output, refused or not; one issue a member at most. */
function issuesOf(settings: object, part: string, skip: readonly Loc[], refusal: Refusal): FieldIssue[] {
  if (!isPlainObject(settings)) return [];
  const skipped = new Set(skip.map((loc) => loc.join('\u0000')));
  const issues: FieldIssue[] = [];
  const check = (own: Record<string, unknown>, loc: Loc) => {
    const place = { own, whole: settings, inOutput: own !== settings };
    for (const [member, value] of Object.entries(own)) {
      const at = [...loc, member];
      if (value === undefined || skipped.has(at.join('\u0000'))) continue;
      const refused = refusal(member, value, place);
      if (refused) issues.push({ loc: at, ...refused, input: value });
    }
  };
  check(settings, ['body', part]);
  const outputs = settings.outputs;
  if (Array.isArray(outputs) && !skipped.has(['body', part, 'outputs'].join('\u0000')))
    outputs.forEach((output: unknown, index) => {
      if (isPlainObject(output)) check(output, ['body', part, 'outputs', index]);
    });
  return issues;
}
