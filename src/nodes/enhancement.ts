// A node's enhancement: the request's enhancement members as the node's editor saved them, with the
// message's overrides (msg.enhancement) applied, checked with the interface's own rules (src/contract)
// so an error names where a bad value came from: `msg.enhancement.<member>` or `setting "<label>"`.
import type { FieldIssue } from '../contract/field-issue';
import { issuesError } from './input-error';
import type { NodeDef } from './red';
import type { Translate } from './texts';

export interface EnhancementField {
  /** The member's name in the request (and in msg.enhancement). */
  member: string;
  /** The node property the editor saves it in. */
  prop: string;
  /** The key of its label, as errors name it (`setting "<label>"`). */
  label: string;
  numeric?: boolean;
  /** What an empty setting means: absent (the service's default) unless given. */
  whenEmpty?: null;
  /** A checkbox whose unticked state is the service's default: left out, so a service without the member is not asked. */
  falseIsEmpty?: boolean;
  /** A checkbox that, ticked, sends this value (dereverb: full strength) rather than true. */
  trueIs?: number;
}

/** Enhancement members by name, as the request carries them. */
export type Enhancement = Record<string, unknown>;

/** Editor values are strings; a number-like string becomes a number, anything else stays for the check to name. */
function coerce(value: unknown, field: EnhancementField): unknown {
  if (!field.numeric || typeof value !== 'string' || value.trim() === '') return value;
  const number = Number(value);
  return Number.isFinite(number) ? number : value;
}

/** The enhancement the node's editor saved; an empty value is left out (or null, where the field says so). */
export function enhancementOf(def: NodeDef, fields: readonly EnhancementField[]): Enhancement {
  const enhancement: Enhancement = {};
  for (const field of fields) {
    const value = def[field.prop];
    if (value === undefined || value === null || value === '' || (field.falseIsEmpty && value === false)) {
      if (field.whenEmpty === null) enhancement[field.member] = null;
      continue;
    }
    enhancement[field.member] = value === true && field.trueIs !== undefined ? field.trueIs : coerce(value, field);
  }
  return enhancement;
}

/**
 * The node's enhancement with the message's overrides applied, or a VALIDATION error naming each bad
 * value as `msg.enhancement.<member>` or `setting "<label>"`.
 */
export function withOverrides(
  t: Translate,
  configured: Enhancement,
  overrides: Record<string, unknown>,
  fields: readonly EnhancementField[],
  check: (enhancement: Enhancement) => FieldIssue[],
  /** Names of request members that are not enhancement members, e.g. `{ file_download_url: 'msg.url' }`. */
  otherNames: Record<string, string> = {},
): Enhancement {
  const byMember = new Map(fields.map((f) => [f.member, f]));
  const unknown = Object.keys(overrides).filter((member) => !byMember.has(member));
  if (unknown.length > 0) {
    const permitted = fields.map((f) => f.member).join(', ');
    throw issuesError(
      t,
      unknown.map((member) => ({
        loc: [member],
        msg: t('media-enhance.rule.notASetting', { permitted }),
        type: 'value_error.extra',
        input: overrides[member],
      })),
      (loc) => `msg.enhancement.${String(loc[0])}`,
    );
  }
  const merged: Enhancement = { ...configured };
  for (const [member, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    merged[member] = coerce(value, byMember.get(member)!);
  }
  const issues = check(merged);
  if (issues.length > 0) {
    throw issuesError(t, issues, (loc) => {
      const member = String(loc[loc.length - 1]);
      if (member in overrides) return `msg.enhancement.${member}`;
      const field = byMember.get(member);
      return field ? { prop: field.prop, label: t(field.label) } : (otherNames[member] ?? loc.join('.'));
    });
  }
  return merged;
}
