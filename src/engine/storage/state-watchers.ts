// Held status requests (`?wait=`) waiting for a media to move on: woken when its state changes or its
// progress has moved on by PROGRESS_STEP. One helper for the records on disk and those in Redis.

/**
 * Points of progress (percent) that answer a held status request, so a person sees a job move however
 * short it is (a few answers more per media at most).
 */
export const PROGRESS_STEP = 10;

export class StateWatchers {
  /** Who waits, by uid. */
  private readonly waiting = new Map<string, Set<() => void>>();
  /** The percent at which held requests were last answered for progress, by uid. */
  private readonly progressAnswered = new Map<string, number>();

  /**
   * Resolves when `wake(uid)` is called, `signal` aborts, or `changedAlready` (asked once the watcher
   * listens) says the media moved on meanwhile; never rejects: the caller then answers with the media as it is.
   */
  wait(uid: string, signal: AbortSignal, changedAlready?: () => Promise<boolean>): Promise<void> {
    return new Promise((resolve) => {
      let watchers = this.waiting.get(uid);
      if (!watchers) this.waiting.set(uid, (watchers = new Set()));
      const done = () => {
        watchers.delete(done);
        if (watchers.size === 0 && this.waiting.get(uid) === watchers) this.waiting.delete(uid);
        signal.removeEventListener('abort', done);
        resolve();
      };
      watchers.add(done);
      signal.addEventListener('abort', done, { once: true });
      void changedAlready?.().then((changed) => changed && done());
    });
  }

  wake(uid: string): void {
    for (const wake of [...(this.waiting.get(uid) ?? [])]) wake();
  }

  /** Answers every held request (the engine is closing). */
  wakeAll(): void {
    for (const watchers of [...this.waiting.values()]) for (const wake of [...watchers]) wake();
  }

  /** Whether `percent` moved on by PROGRESS_STEP since held requests were last answered for the media; notes it when so. */
  progressStepped(uid: string, percent: number): boolean {
    if (percent - (this.progressAnswered.get(uid) ?? 0) < PROGRESS_STEP) return false;
    this.progressAnswered.set(uid, percent);
    return true;
  }

  /** The media's state changed, or it is gone: its progress counts from nothing again. */
  forgetProgress(uid: string): void {
    this.progressAnswered.delete(uid);
  }
}
