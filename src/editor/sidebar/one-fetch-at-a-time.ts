// A fetch that runs one at a time: calls that come while one runs make one more run after it, not one each.

/** `run` wrapped so that it never overlaps itself; a call during a run is answered when the extra run ends. */
export function oneAtATime(run: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | null = null;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await run();
      } while (again);
    })().finally(() => (running = null));
    return running;
  };
}
