// A node's input that cannot work: a msg property or one of the node's own settings, named as the user
// wrote it, with the value it had and the rule, a line each. A VALIDATION error: nothing was sent.
import { MediaEnhanceError } from '../client/errors';
import { describeValue as describeContractValue, type FieldIssue } from '../contract/field-issue';
import type { Translate } from './texts';

/** Where a bad value came from: a msg property by its path ('msg.payload'), or one of the node's settings. */
export type InputField = string | NodeSetting;

export interface NodeSetting {
  /** The node property the editor saves it in. */
  prop: string;
  /** Its label, in the user's language. */
  label: string;
}

export class InputError extends MediaEnhanceError {
  constructor(
    lines: string[],
    /** The fields the lines name (a line about two fields names both). */
    readonly fields: InputField[],
  ) {
    super('VALIDATION', lines.join('; '), { details: lines });
  }
}

/** Whether every line names one of the node's own settings (`prop` alone, when given): not the message's fault. */
export function namesOnlySettings(err: unknown, prop?: string): boolean {
  return (
    err instanceof InputError &&
    err.fields.every((field) => typeof field !== 'string' && (prop === undefined || field.prop === prop))
  );
}

export function fieldName(t: Translate, field: InputField): string {
  return typeof field === 'string' ? field : t('media-enhance.input.setting', { label: field.label });
}

/** As the contract quotes a value, with words for what a msg often holds instead: a Buffer, or nothing. */
export function describeValue(t: Translate, value: unknown): string {
  if (Buffer.isBuffer(value)) return t('media-enhance.input.buffer', { bytes: value.length });
  if (value === undefined) return t('media-enhance.input.nothing');
  return describeContractValue(value);
}

/** `field`'s value and the rule it breaks; `alsoNamed`: the other fields the rule names (two that clash). */
export function inputError(
  t: Translate,
  field: InputField,
  value: unknown,
  rule: string,
  alsoNamed: InputField[] = [],
): InputError {
  const line = t('media-enhance.input.line', { field: fieldName(t, field), rule, value: describeValue(t, value) });
  return new InputError([line], [field, ...alsoNamed]);
}

/** Issues from the contract's checks (their rules in its words), with `loc` turned into the field the user wrote. */
export function issuesError(
  t: Translate,
  issues: FieldIssue[],
  fieldOf: (loc: FieldIssue['loc']) => InputField,
): InputError {
  const fields = issues.map((issue) => fieldOf(issue.loc));
  const lines = issues.map((issue, i) =>
    t('media-enhance.input.line', {
      field: fieldName(t, fields[i]),
      rule: issue.msg,
      value: describeValue(t, issue.input),
    }),
  );
  return new InputError(lines, fields);
}
