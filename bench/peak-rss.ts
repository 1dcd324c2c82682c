// How far a process's resident memory grows above where it stood when measuring began, sampled
// every 20 ms; one peak per phase (upload, download) and one for the whole run.
export class PeakRss {
  private readonly baseline = process.memoryUsage.rss();
  private phasePeak = this.baseline;
  private overallPeak = this.baseline;
  private readonly timer = setInterval(() => this.sample(), 20);

  /** Growth above the baseline at the highest point since the previous phase ended. */
  endPhase(): number {
    this.sample();
    const growth = this.phasePeak - this.baseline;
    this.phasePeak = process.memoryUsage.rss();
    return growth;
  }

  /** Growth above the baseline at the highest point of the whole run; stops sampling. */
  stop(): number {
    this.sample();
    clearInterval(this.timer);
    return this.overallPeak - this.baseline;
  }

  private sample(): void {
    const rss = process.memoryUsage.rss();
    this.phasePeak = Math.max(this.phasePeak, rss);
    this.overallPeak = Math.max(this.overallPeak, rss);
  }
}

/** What each child process of the transfer benchmark prints. */
export interface TransferTimes {
  uploadMs: number;
  downloadMs: number;
  /** Peak RSS growth during the upload, the download, and the whole run. */
  uploadRss: number;
  downloadRss: number;
  rssGrowth: number;
}
