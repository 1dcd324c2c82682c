// Which file of which media an editor's request names, checked alike for the download, the player and
// the player's tickets: only a media this instance handled (a path, or a uid it never handled, is not
// found, so the answer says nothing of what exists) and a step of the interface, ENHANCED when none.
import { checkMediaUid, DEFAULT_STEP, STEPS, type Step } from '../contract/fields';
import type { AdminResponse } from './plugin-api';
import type { SidebarRegistry } from './registry';

export interface MediaFile {
  uid: string;
  step: Step;
}

/** The file `uid` and `step` name, or undefined once `res` has been answered 404 or 400. */
export function mediaFileOf(
  registry: Pick<SidebarRegistry, 'handled'>,
  res: AdminResponse,
  uid: unknown,
  step: unknown,
): MediaFile | undefined {
  if (checkMediaUid(uid).length > 0 || !registry.handled(uid as string)) return void notFound(res);
  const chosen = step === undefined ? DEFAULT_STEP : step;
  if (!(STEPS as readonly unknown[]).includes(chosen))
    return void res.status(400).json({
      error: `step ${JSON.stringify(chosen).slice(0, 100)}: must be ENHANCED or PRE, or left out for ENHANCED`,
    });
  return { uid: uid as string, step: chosen as Step };
}

export function notFound(res: AdminResponse): void {
  res.status(404).json({ error: 'not found' });
}
