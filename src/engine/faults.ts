// Fault injection, for tests and benchmarks: a real server that misbehaves on purpose, observably.

export interface FaultOptions {
  /** Probability (0..1) that a request is answered 500. */
  error500Rate?: number;
  /** Probability that a request is answered 503. */
  error503Rate?: number;
  /** Probability that a response is cut off (connection reset) after half its body. */
  resetRate?: number;
  /** Probability that a response body drips out slowly. */
  dripRate?: number;
  /** Speed of a dripping body. Default 16 KiB/s. */
  dripBytesPerSecond?: number;
  /** The next N requests to a rate-limited operation are answered 429 whatever the count. */
  forced429?: number;
  /** Probability that processing ends FAILED. */
  failProcessingRate?: number;
  /** Source of randomness (for reproducible runs). Default Math.random. */
  random?: () => number;
}

export class Faults {
  private forced429Left: number;
  private readonly random: () => number;

  constructor(private readonly options: FaultOptions) {
    this.forced429Left = options.forced429 ?? 0;
    this.random = options.random ?? Math.random;
  }

  private roll(rate: number | undefined): boolean {
    return rate !== undefined && rate > 0 && this.random() < rate;
  }

  /** A status to answer instead of serving the request, if a fault says so. */
  errorStatus(): 500 | 503 | undefined {
    if (this.roll(this.options.error500Rate)) return 500;
    if (this.roll(this.options.error503Rate)) return 503;
    return undefined;
  }

  takeForced429(): boolean {
    if (this.forced429Left <= 0) return false;
    this.forced429Left--;
    return true;
  }

  resetResponse(): boolean {
    return this.roll(this.options.resetRate);
  }

  /** Bytes per second for a dripping response, or undefined for full speed. */
  dripSpeed(): number | undefined {
    return this.roll(this.options.dripRate) ? (this.options.dripBytesPerSecond ?? 16 * 1024) : undefined;
  }

  failProcessing(): boolean {
    return this.roll(this.options.failProcessingRate);
  }
}
