// The checks of one value against one rule (a number in bounds, one of a list, a URL...), each giving the
// FastAPI-style issue the service answers with: the message, its type and the value given.
import type { FieldIssue, Loc } from './field-issue';

export type Check = (value: unknown, loc: Loc) => FieldIssue | undefined;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A number within [min, max]; with `integer`, a whole one (the interface says integer for most fields). */
export const numberIn =
  (min: number, max: number, integer = false): Check =>
  (value, loc) => {
    const kind = integer ? 'integer' : 'number';
    if (typeof value !== 'number' || !(integer ? Number.isInteger(value) : Number.isFinite(value))) {
      return {
        loc,
        msg: `value is not a valid ${kind} (a ${kind} from ${min} to ${max} is required)`,
        type: integer ? 'type_error.integer' : 'type_error.float',
        input: value,
      };
    }
    return boundIssue(value, min, max, loc);
  };

export const integerIn = (min: number, max: number): Check => numberIn(min, max, true);

export function boundIssue(value: number, min: number, max: number, loc: Loc): FieldIssue | undefined {
  if (value < min)
    return {
      loc,
      msg: `ensure this value is greater than or equal to ${min}`,
      type: 'value_error.number.not_ge',
      input: value,
    };
  if (value > max)
    return {
      loc,
      msg: `ensure this value is less than or equal to ${max}`,
      type: 'value_error.number.not_le',
      input: value,
    };
  return undefined;
}

export const oneOf =
  (allowed: readonly string[]): Check =>
  (value, loc) =>
    typeof value === 'string' && allowed.includes(value)
      ? undefined
      : {
          loc,
          msg: `value is not a valid enumeration member; permitted: ${allowed.map((a) => `'${a}'`).join(', ')}`,
          type: 'type_error.enum',
          input: value,
        };

/** One of a list of numbers (a sample rate). */
export const numberOneOf =
  (allowed: readonly number[]): Check =>
  (value, loc) =>
    typeof value === 'number' && allowed.includes(value)
      ? undefined
      : {
          loc,
          msg: `value is not a valid enumeration member; permitted: ${allowed.join(', ')}`,
          type: 'type_error.enum',
          input: value,
        };

export const aBoolean: Check = (value, loc) =>
  typeof value === 'boolean'
    ? undefined
    : { loc, msg: 'value could not be parsed to a boolean (true or false)', type: 'type_error.bool', input: value };

export const nullOr =
  (check: Check): Check =>
  (value, loc) =>
    value === null ? undefined : check(value, loc);

export const aString: Check = (value, loc) =>
  typeof value === 'string' ? undefined : { loc, msg: 'str type expected', type: 'type_error.str', input: value };

/** An http or https URL of `length.min` to `length.max` characters. */
export const httpUrl =
  (length: { min: number; max: number }): Check =>
  (value, loc) => {
    if (typeof value !== 'string') return { loc, msg: 'str type expected', type: 'type_error.str', input: value };
    if (value.length < length.min || value.length > length.max) {
      return {
        loc,
        msg: `ensure this value has between ${length.min} and ${length.max} characters`,
        type: 'value_error.any_str.length',
        input: value,
      };
    }
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      return { loc, msg: 'invalid or missing URL scheme', type: 'value_error.url', input: value };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      return {
        loc,
        msg: 'URL scheme not permitted (http or https is required)',
        type: 'value_error.url.scheme',
        input: value,
      };
    }
    if (!parsed.hostname) return { loc, msg: 'URL host invalid', type: 'value_error.url.host', input: value };
    return undefined;
  };

export const aList: Check = (value, loc) =>
  Array.isArray(value) ? undefined : { loc, msg: 'value is not a valid list', type: 'type_error.list', input: value };
