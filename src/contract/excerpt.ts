// A short, safe quotation of what a caller sent, for error answers: bounded in length whatever the
// input's size, and in depth whatever its nesting (a 10 000-deep array must not overflow the stack
// of the answer that refuses it).

/** At most `max` characters: strings are cut, deeper or longer structures end in `…`. */
export const EXCERPT_CHARS = 120;

/**
 * The value as an error answer may quote it: itself when it is a number, boolean or null; a string cut
 * to `max` characters; a small object or array as a copy, a larger one as the start of its JSON text.
 */
export function excerpt(value: unknown, max = EXCERPT_CHARS): unknown {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.length > max ? `${value.slice(0, max)}…` : value;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- what is left (undefined, a bigint, a symbol, a function) has a String form
  if (typeof value !== 'object') return String(value).slice(0, max);
  const { text, whole } = jsonStart(value, max);
  return whole ? (JSON.parse(text) as unknown) : `${text}…`;
}

/**
 * The first `max` characters of a value's JSON text, written without ever going deeper than the text
 * allows: each level writes at least one character, so recursion stops within `max` levels.
 */
export function jsonStart(value: unknown, max: number): { text: string; whole: boolean } {
  let text = '';
  const full = () => text.length > max;
  const write = (v: unknown): void => {
    if (full()) return;
    if (Array.isArray(v)) {
      text += '[';
      for (let i = 0; i < v.length && !full(); i++) {
        if (i > 0) text += ',';
        write(v[i]);
      }
      text += ']';
    } else if (v !== null && typeof v === 'object') {
      text += '{';
      let first = true;
      for (const key of Object.keys(v)) {
        if (full()) break;
        text += `${first ? '' : ','}${JSON.stringify(key.slice(0, max))}:`;
        first = false;
        write((v as Record<string, unknown>)[key]);
      }
      text += '}';
    } else {
      text += typeof v === 'string' ? JSON.stringify(v.slice(0, max + 1)) : (JSON.stringify(v) ?? 'null');
    }
  };
  write(value);
  return full() ? { text: text.slice(0, max), whole: false } : { text, whole: true };
}
