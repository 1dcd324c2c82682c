// What one limiter pass learnt about its input's true peaks, for the next passes over the same input.
// The limiter interpolates the points between samples wherever the gain could lift them over the ceiling,
// and its cheap test for that (the window's largest sample times the filter's worst-case gain) is loose:
// on speech it interpolates most of the voiced stretches. Once a pass has interpolated a stretch, its real
// peak is known, and a later pass at about the same gain skips every stretch whose known peak stays under
// the ceiling. The output is the same sample for sample: a skipped point could not have changed the gain.

/** log2 of the frames per stretch: small enough that a loud peak rules out little around it. */
export const STRETCH_SHIFT = 6;

export class EnvelopeBounds {
  /** Per stretch of 2^STRETCH_SHIFT frames: no point between samples in it is above this (linear, before gain); Infinity when unknown. */
  private bounds = new Float32Array(0);

  /** The known bound on the points between samples of `stretch` (Infinity when not known). */
  boundOf(stretch: number): number {
    return stretch < this.bounds.length ? this.bounds[stretch] : Infinity;
  }

  /** What a pass found: no point between samples of `stretch` is above `bound`. */
  set(stretch: number, bound: number): void {
    if (stretch >= this.bounds.length) {
      const grown = new Float32Array(Math.max(2 * this.bounds.length, stretch + 1024)).fill(Infinity);
      grown.set(this.bounds);
      this.bounds = grown;
    }
    // A Float32 rounded up, never down: the bound must stay a bound.
    const stored = Math.fround(bound);
    this.bounds[stretch] = stored < bound ? stored * (1 + 2 ** -23) : stored;
  }
}
