// An episode's intro and outro for *enhance file*: the node's settings, or msg.intro / msg.outro (paths),
// and the crossfade between them and the episode; checked before anything is sent.
import { promises as fsp } from 'node:fs';
import { inputError, type InputField } from './input-error';
import { resolvePath } from './msg-inputs';
import type { NodeDef, NodeMessage } from './red';
import type { Translate } from './texts';

/** The longest crossfade, as the setting's bound (seconds): a music bed under speech is another tool's job. */
export const MAX_CROSSFADE_SECONDS = 10;

export interface EpisodeParts {
  /** Absolute paths; at least one of the two is set. */
  intro?: string;
  outro?: string;
  crossfadeSeconds: number;
}

/**
 * The message's intro and outro: msg.intro / msg.outro when the message has them (an empty string leaves
 * the node's out), else the node's settings; undefined when there is neither. Each must be a file.
 */
export async function readEpisodeParts(
  t: Translate,
  def: NodeDef,
  msg: NodeMessage,
  workingDirectory: string | undefined,
): Promise<EpisodeParts | undefined> {
  const crossfadeSeconds = readCrossfadeSeconds(t, def);
  const part = async (name: 'intro' | 'outro'): Promise<string | undefined> => {
    const fromMessage = msg[name] !== undefined;
    const value = fromMessage ? msg[name] : def[name];
    const field: InputField = fromMessage
      ? `msg.${name}`
      : { prop: name, label: t(`media-enhance-file.label.${name}`) };
    if (value === undefined || value === '' || (!fromMessage && typeof value === 'string' && value.trim() === ''))
      return undefined;
    if (typeof value !== 'string' || value.trim() === '')
      throw inputError(t, field, value, t('media-enhance.rule.filePath'));
    const path = resolvePath(value.trim(), workingDirectory);
    const stat = await fsp.stat(path).catch(() => undefined);
    if (!stat?.isFile()) throw inputError(t, field, value, t('media-enhance.rule.noSuchFile'));
    return path;
  };
  const intro = await part('intro');
  const outro = await part('outro');
  if (intro === undefined && outro === undefined) return undefined;
  return { ...(intro ? { intro } : {}), ...(outro ? { outro } : {}), crossfadeSeconds };
}

/** The node's crossfade (seconds; empty: none). */
export function readCrossfadeSeconds(t: Translate, def: NodeDef): number {
  const raw = def.crossfade;
  if (raw === undefined || raw === '') return 0;
  const seconds = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : NaN;
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_CROSSFADE_SECONDS) {
    const setting = { prop: 'crossfade', label: t('media-enhance-file.label.crossfade') };
    throw inputError(t, setting, raw, t('media-enhance.rule.crossfadeSeconds', { max: MAX_CROSSFADE_SECONDS }));
  }
  return seconds;
}
