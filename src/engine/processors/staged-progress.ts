// A job's progress as one share from 0 to 1 over its stages, each weighed by the time it usually takes
// (measured per chain on speech: bench/RESULTS.md has the speeds). The processor says which stage it is in
// and how far that stage is; the engine turns the pace into an estimate of the time left.

export type ProcessingStage = 'decode' | 'measure' | 'enhance' | 'normalize' | 'outputs';

/** Each stage's weight (`outputs`, the extra outputs of several-outputs, is 0 for a job without them). */
export type StageWeights = Record<ProcessingStage, number>;

/** Posts at each whole percent (the engine shows whole percent)... */
const STEP = 0.01;
/**
 * ... and, between two, each tenth of a percent once this long has passed since the last post: a long
 * file takes many seconds per percent, and the engine needs the pace in the job's first seconds to tell
 * the time left (progress-estimate.ts).
 */
const FINE_STEP = 0.001;
const FINE_EVERY_MS = 250;

export class StagedProgress {
  private readonly order: ProcessingStage[] = ['decode', 'measure', 'enhance', 'normalize', 'outputs'];
  private readonly total: number;
  private posted = -1;
  private postedAt = -Infinity;

  constructor(
    private readonly weights: StageWeights,
    private readonly report: ((share: number) => void) | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.total = this.order.reduce((sum, stage) => sum + this.weights[stage], 0);
  }

  /** Says that `stage` is `share` (0 to 1) done, every stage before it whole. */
  at(stage: ProcessingStage, share = 0): void {
    if (!this.report || this.total <= 0) return;
    const before = this.order.slice(0, this.order.indexOf(stage)).reduce((sum, s) => sum + this.weights[s], 0);
    const overall = (before + this.weights[stage] * Math.min(1, Math.max(0, share))) / this.total;
    const moved = overall - this.posted;
    const now = this.now();
    const due = moved >= STEP || overall >= 1 || (moved >= FINE_STEP && now - this.postedAt >= FINE_EVERY_MS);
    if (!due) return;
    this.posted = overall;
    this.postedAt = now;
    this.report(overall);
  }

  /** A reporter of one stage's share, for code that knows only its own work. */
  of(stage: ProcessingStage): (share: number) => void {
    return (share) => this.at(stage, share);
  }
}
