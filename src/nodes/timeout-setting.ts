// A timeout setting in seconds (the wait node's, the config node's request and wait timeouts): empty for
// the default, else from 1 s to the longest a timer holds. The editor's dialog checks the same rule
// (secondsOrEmpty in src/editor/validators.ts, which runs in the browser and so repeats the bounds).
import { MAX_TIMER_MS } from '../client/clock';
import { inputError, type InputField } from './input-error';
import type { Translate } from './texts';

/**
 * A timeout under a second is never useful: a wait would end before the service's first status answer,
 * a request before most answers over a network.
 */
export const TIMEOUT_SECONDS = { min: 1, max: Math.floor(MAX_TIMER_MS / 1000) } as const;

/**
 * The setting's milliseconds, undefined when empty; read as the dialog reads it (the text trimmed, then a
 * number). Otherwise throws the setting, its value and `rule` (which says the bounds and what empty means).
 */
export function readTimeoutMs(t: Translate, setting: InputField, value: unknown, rule: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === 'string' || typeof value === 'number' ? String(value).trim() : 'not a number';
  if (text === '') return undefined;
  const seconds = Number(text);
  if (!(Number.isFinite(seconds) && seconds >= TIMEOUT_SECONDS.min && seconds <= TIMEOUT_SECONDS.max))
    throw inputError(t, setting, value, rule);
  return seconds * 1000;
}
