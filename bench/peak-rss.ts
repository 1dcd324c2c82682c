// How far a process's resident memory grows above where it stood when measuring began, sampled
// every 20 ms; one peak per phase (upload, download) and one for the whole run.
export class PeakRss {
  private readonly baseline: number;
  private phasePeak: number;
  private overallPeak: number;
  private readonly timer = setInterval(() => this.sample(), 20);

  constructor() {
    // Measuring starts from a collected heap (when run with --expose-gc), so garbage left by what came
    // before is not counted for or against what is measured.
    globalThis.gc?.();
    this.baseline = this.phasePeak = this.overallPeak = process.memoryUsage.rss();
  }

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

/** One upload, wait and download: its timings and memory. */
export interface TransferTimes {
  uploadMs: number;
  downloadMs: number;
  /** Peak RSS growth during the upload, the download, and the whole run. */
  uploadRss: number;
  downloadRss: number;
  rssGrowth: number;
}

/**
 * A Node contestant's transfer in each of two processes. `fresh`: the first requests the process ever
 * makes, so V8 also compiles the hot code while it runs (for undici, the optimizing compile of its
 * WebAssembly HTTP parser takes 15-35 MiB for a moment, once per process). `warmedUp`: after
 * WARM_UP_REQUESTS small requests, as in a process that has been talking to the service (Node-RED).
 */
export interface TransferPasses {
  fresh: TransferTimes;
  warmedUp: TransferTimes;
}

/** Small requests (a status request for a media that does not exist) made before a warmed-up transfer. */
export const WARM_UP_REQUESTS = 500;
