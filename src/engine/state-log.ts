// A failure that repeats (Redis refusing writes, a sweep that cannot run) is told once while it lasts:
// again only when its reason changes, and once when it is over. The error log stays readable and small
// however often the failing call is tried.

export class StateLog {
  /** The reason last told, while the failure lasts. */
  private current?: string;

  constructor(
    private readonly log: (line: string) => void,
    /** What fails, e.g. `job queue`. */
    private readonly what: string,
  ) {}

  failed(reason: string): void {
    const told = reason.slice(0, 300);
    if (told === this.current) return;
    this.current = told;
    this.log(`${this.what}: ${told}`);
  }

  ok(): void {
    if (this.current === undefined) return;
    this.current = undefined;
    this.log(`${this.what}: working again`);
  }
}
