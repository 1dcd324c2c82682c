// The editor's downloads (GET /media-enhance/media/:uid/file) get a small share of their own: at most
// SIDEBAR_DOWNLOADS_AT_ONCE at once in this Node-RED, and each only when the service's download window has
// a place now and no flow waits for one (the client's `waitForPlace: false`). Beyond that the editor is
// answered 429 with Retry-After at once; it never waits in the line the flows wait in, so any number of
// editor users cannot delay a flow's download by more than the few places this share holds.
export const SIDEBAR_DOWNLOADS_AT_ONCE = 2;

export class SidebarDownloadShare {
  private running = 0;

  constructor(readonly atOnce = SIDEBAR_DOWNLOADS_AT_ONCE) {}

  /** A place for one download, and its release (safe to call more than once); undefined while all are taken. */
  take(): (() => void) | undefined {
    if (this.running >= this.atOnce) return undefined;
    this.running++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.running--;
    };
  }

  /** Downloads under way. */
  inUse(): number {
    return this.running;
  }
}
