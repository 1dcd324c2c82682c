// A job's progress as one share from 0 to 1 over its stages, each weighed by the time it usually takes
// (measured per chain on speech: bench/RESULTS.md has the speeds). The processor says which stage it is in
// and how far that stage is; the engine turns the pace into an estimate of the time left.

export type ProcessingStage = 'decode' | 'measure' | 'enhance' | 'normalize';

export type StageWeights = Record<ProcessingStage, number>;

/** Posts no more often than each whole percent: the engine shows whole percent. */
const STEP = 0.01;

export class StagedProgress {
  private readonly order: ProcessingStage[] = ['decode', 'measure', 'enhance', 'normalize'];
  private readonly total: number;
  private posted = -1;

  constructor(
    private readonly weights: StageWeights,
    private readonly report: ((share: number) => void) | undefined,
  ) {
    this.total = this.order.reduce((sum, stage) => sum + weights[stage], 0);
  }

  /** Says that `stage` is `share` (0 to 1) done, every stage before it whole. */
  at(stage: ProcessingStage, share = 0): void {
    if (!this.report || this.total <= 0) return;
    const before = this.order.slice(0, this.order.indexOf(stage)).reduce((sum, s) => sum + this.weights[s], 0);
    const overall = (before + this.weights[stage] * Math.min(1, Math.max(0, share))) / this.total;
    if (overall - this.posted < STEP && overall < 1) return;
    this.posted = overall;
    this.report(overall);
  }

  /** A reporter of one stage's share, for code that knows only its own work. */
  of(stage: ProcessingStage): (share: number) => void {
    return (share) => this.at(stage, share);
  }
}
