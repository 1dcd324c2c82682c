// How far a media's processing is, and how long it has left, from the work measured so far: the time
// taken for the share done says how long the rest takes at the same pace.
import type { MediaProgress } from '../../contract/media-progress';

/** Below this share done, or this time spent, the pace is too young to say anything of the rest. */
const MIN_SHARE = 0.03;
const MIN_ELAPSED_MS = 300;

export class ProgressEstimate {
  private startedAt: number | undefined;
  private share = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes a share done (0 to 1) as the processor reported it; the progress to show, never going back. */
  update(share: number): MediaProgress {
    const now = this.now();
    this.startedAt ??= now;
    if (Number.isFinite(share)) this.share = Math.min(1, Math.max(this.share, share));
    const elapsed = now - this.startedAt;
    const measured = this.share >= MIN_SHARE && elapsed >= MIN_ELAPSED_MS;
    return {
      percent: Math.floor(this.share * 100),
      // Tenths of a second: a short media's whole processing may take a second or two.
      seconds_left: measured ? Math.round(((elapsed / this.share) * (1 - this.share)) / 100) / 10 : null,
    };
  }
}
