// How far a media's processing is, and how long it has left, from the work measured so far: the pace
// since the work first moved says how long the rest takes.
import type { MediaProgress } from '../../contract/media-progress';

/**
 * The pace is counted from the first report of work done, not from the start: what comes before (a
 * thread starting, the file opened) is a one-off cost the rest does not have. It says something once the
 * work has moved this much further, over this much time.
 */
const MIN_SHARE_MEASURED = 0.05;
const MIN_ELAPSED_MS = 300;

export class ProgressEstimate {
  private share = 0;
  private firstMoved: { at: number; share: number } | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes a share done (0 to 1) as the processor reported it; the progress to show, never going back. */
  update(share: number): MediaProgress {
    const now = this.now();
    if (Number.isFinite(share)) this.share = Math.min(1, Math.max(this.share, share));
    if (this.share > 0) this.firstMoved ??= { at: now, share: this.share };
    const since = this.firstMoved;
    const measured = since && this.share - since.share >= MIN_SHARE_MEASURED && now - since.at >= MIN_ELAPSED_MS;
    const msPerShare = measured ? (now - since.at) / (this.share - since.share) : undefined;
    return {
      percent: Math.floor(this.share * 100),
      // Tenths of a second: a short media's whole processing may take a second or two.
      seconds_left: msPerShare === undefined ? null : Math.round((msPerShare * (1 - this.share)) / 100) / 10,
    };
  }
}
