// How far a media's processing is, and how long it has left, from the work measured so far: the pace
// measured in the job itself says how long the rest takes, never a speed assumed in advance (a loaded
// machine runs many times slower than a quiet one).
import type { MediaProgress } from '../../contract/media-progress';

/**
 * The pace is counted from the first report of work done, not from the start: what comes before (a
 * thread starting, the file opened) is a one-off cost the rest does not have. It says something once it
 * was measured this long: a few reports in the job's first seconds, whatever the file's length.
 */
const MIN_MEASURED_MS = 2_000;
/**
 * The pace is that of the last this long: the stages do not run at the pace their weights assume
 * (staged-progress.ts), nor does a machine whose other work comes and goes, so the estimate follows
 * the pace the work has now rather than an average since the start.
 */
const WINDOW_MS = 20_000;

interface Sample {
  at: number;
  share: number;
}

export class ProgressEstimate {
  private share = 0;
  /** The reports in the window, oldest first; the first one may be older, as the window's start. */
  private readonly samples: Sample[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes a share done (0 to 1) as the processor reported it; the progress to show, never going back. */
  update(share: number): MediaProgress {
    const now = this.now();
    if (Number.isFinite(share)) this.share = Math.min(1, Math.max(this.share, share));
    if (this.share > 0 && this.share > (this.samples.at(-1)?.share ?? 0))
      this.samples.push({ at: now, share: this.share });
    while (this.samples.length > 2 && this.samples[1].at <= now - WINDOW_MS) this.samples.shift();
    const since = this.samples[0];
    const measured = since !== undefined && now - since.at >= MIN_MEASURED_MS && this.share > since.share;
    const msPerShare = measured ? (now - since.at) / (this.share - since.share) : undefined;
    return {
      percent: Math.floor(this.share * 100),
      // Tenths of a second: a short media's whole processing may take a second or two.
      seconds_left: msPerShare === undefined ? null : Math.round((msPerShare * (1 - this.share)) / 100) / 10,
    };
  }
}
