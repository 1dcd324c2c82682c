// The issue a field check gives, as the service answers 422 (FastAPI's {loc, msg, type} plus the value
// given), and the readable line an error message makes of one.
import { jsonStart } from './excerpt';

export type Loc = (string | number)[];

export interface FieldIssue {
  loc: Loc;
  msg: string;
  type: string;
  input?: unknown;
}

/** One readable line per issue: `body.loudness_target_level: ensure this value is less than or equal to -5 (got -3)`. */
export function describeIssue(issue: { loc?: unknown; msg?: unknown; input?: unknown }): string {
  const loc = Array.isArray(issue.loc) ? issue.loc.join('.') : '';
  const msg = typeof issue.msg === 'string' ? issue.msg : JSON.stringify(issue.msg);
  const got = 'input' in issue && issue.input !== undefined ? ` (got ${describeValue(issue.input)})` : '';
  return `${loc ? `${loc}: ` : ''}${msg}${got}`;
}

/** A value as an error message quotes it: JSON, cut at 80 characters, however deeply it nests. */
export function describeValue(value: unknown): string {
  const { text, whole } =
    value !== null && typeof value === 'object'
      ? jsonStart(value, 80)
      : { text: JSON.stringify(value) ?? String(value), whole: true };
  return !whole || text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
