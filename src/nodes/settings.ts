// A node's enhancement settings: what the editor saved, overridden per message by msg.enhancement,
// checked with the interface's own rules (src/contract) so the error names where a bad value came from.
import type { FieldIssue } from '../contract/fields';
import { issuesError } from './msg-inputs';
import type { NodeDef } from './red';

export interface SettingField {
  /** The member's name in the request (and in msg.enhancement). */
  member: string;
  /** The node property the editor saves it in. */
  prop: string;
  /** The label the editor shows. */
  label: string;
  numeric?: boolean;
  /** What an empty setting means: absent (the service's default) unless given. */
  whenEmpty?: null;
}

export type Settings = Record<string, unknown>;

/** Editor values are strings; a number-like string becomes a number, anything else stays for the check to name. */
function coerce(value: unknown, field: SettingField): unknown {
  if (!field.numeric || typeof value !== 'string' || value.trim() === '') return value;
  const number = Number(value);
  return Number.isFinite(number) ? number : value;
}

export function settingsFromNode(def: NodeDef, fields: readonly SettingField[]): Settings {
  const settings: Settings = {};
  for (const field of fields) {
    const value = def[field.prop];
    if (value === undefined || value === null || value === '') {
      if (field.whenEmpty === null) settings[field.member] = null;
      continue;
    }
    settings[field.member] = coerce(value, field);
  }
  return settings;
}

/**
 * The node's settings with the message's overrides applied, or a VALIDATION error naming each bad
 * value as `msg.enhancement.<member>` or `setting "<label>"`.
 */
export function applyOverrides(
  configured: Settings,
  overrides: Record<string, unknown>,
  fields: readonly SettingField[],
  check: (settings: Settings) => FieldIssue[],
  /** Names of request members that are not settings, e.g. `{ file_download_url: 'msg.url' }`. */
  otherNames: Record<string, string> = {},
): Settings {
  const byMember = new Map(fields.map((f) => [f.member, f]));
  const unknown = Object.keys(overrides).filter((member) => !byMember.has(member));
  if (unknown.length > 0) {
    throw issuesError(
      unknown.map((member) => ({
        loc: [member],
        msg: `not a setting of this node; permitted: ${fields.map((f) => f.member).join(', ')}`,
        type: 'value_error.extra',
        input: overrides[member],
      })),
      (loc) => `msg.enhancement.${String(loc[0])}`,
    );
  }
  const merged: Settings = { ...configured };
  for (const [member, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    merged[member] = coerce(value, byMember.get(member)!);
  }
  const issues = check(merged);
  if (issues.length > 0) {
    throw issuesError(issues, (loc) => {
      const member = String(loc[loc.length - 1]);
      if (member in overrides) return `msg.enhancement.${member}`;
      const field = byMember.get(member);
      return field ? `setting "${field.label}"` : (otherNames[member] ?? loc.join('.'));
    });
  }
  return merged;
}
