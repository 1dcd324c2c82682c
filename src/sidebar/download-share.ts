// The editor's downloads (GET /media-enhance/media/:uid/file) get a small share of their own, so that
// read-only editor users cannot starve the flows:
// - at most SIDEBAR_DOWNLOADS_AT_ONCE at once in this Node-RED;
// - at most a tenth of the service's download window (at least 1) started per window;
// - each only when the window has a place now and no flow waits for one (the client's `waitForPlace:
//   false`), never retried: an editor download never waits in the flows' line, so it is never ahead of one.
// Beyond that the editor is answered 429 with Retry-After at once. The flows keep nine tenths of the
// window and the head of the line, however many editors ask.
export const SIDEBAR_DOWNLOADS_AT_ONCE = 2;
/** The part of the download window the editor's downloads may use. */
export const SIDEBAR_WINDOW_SHARE = 0.1;

export interface WindowView {
  /** The window's limit, null when there is none. */
  limit: number | null;
  windowMs: number;
}

export class SidebarDownloadShare {
  private running = 0;
  /** When each editor download of the current window started, oldest first. */
  private starts: number[] = [];

  constructor(
    readonly atOnce = SIDEBAR_DOWNLOADS_AT_ONCE,
    private readonly now: () => number = Date.now,
  ) {}

  /** The most editor downloads that may start per window of this limit. */
  static perWindow(limit: number | null): number {
    return limit === null ? Infinity : Math.max(1, Math.floor(limit * SIDEBAR_WINDOW_SHARE));
  }

  /**
   * A place for one download and its release (safe to call twice), or the seconds until one may free.
   * The caller gives the place back with `release(false)` when the download was never sent.
   */
  take(window: WindowView): { release: (sent?: boolean) => void } | { retryAfterS: number } {
    const now = this.now();
    this.starts = this.starts.filter((at) => at + window.windowMs > now);
    if (this.running >= this.atOnce) return { retryAfterS: 1 };
    if (this.starts.length >= SidebarDownloadShare.perWindow(window.limit))
      return { retryAfterS: Math.max(1, Math.ceil((this.starts[0] + window.windowMs - now) / 1000)) };
    this.running++;
    const started = now;
    this.starts.push(started);
    let held = true;
    return {
      release: (sent = true) => {
        if (!held) return;
        held = false;
        this.running--;
        if (!sent) this.starts = this.starts.filter((at) => at !== started);
      },
    };
  }
}
