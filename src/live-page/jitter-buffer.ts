// The live page's playout queue: the cleaned chunks, by sequence number, played in order at the pace of
// the audio clock. Answers come back unevenly (the network, Node-RED's event loop, the worker threads, a
// busy main thread in the page), so the queue keeps a margin: the least it should still hold when the next
// chunk comes in, as much as the round trips of the last few seconds spread (their 99th percentile over
// their median) and a little more. A chunk that is not there in time is an underrun: silence plays, and
// playing resumes once a chunk and the margin are in. What the queue holds beyond that is let go, oldest
// first, so that the delay stays as short as the connection allows and a lone late answer does not
// lengthen it for good: all of it when playing resumes (the wait was a break already), whole chunks at a
// chunk's turn when more than a chunk too many wait, and less than that from the start of a quiet chunk
// (a pause in the speech, where nothing is heard missing) once the queue has held that much more than it
// needs for a while. A chunk the server refused plays as silence in its place.
// Plain TypeScript with no imports: it runs in the page's AudioWorklet, and in Node for its tests.

export interface JitterBufferOptions {
  /** Samples per chunk. */
  chunk: number;
  /** The margin before any round trip is known, the least it is (over the spread), and the most (samples). */
  margin: { start: number; min: number; max: number };
  /** How many of the latest round trips the spread is taken from, and the loudest chunk of how many is known. */
  remember: number;
  /** Samples over which the least queued is watched: a chunk or more over the margin is too much. */
  watch: number;
}

/** A chunk that starts playing: its sequence number, and where in the samples `take` filled. */
export type OnChunkStart = (seq: number, offset: number) => void;

/** A chunk this much under the loudest of late is a pause: letting it go is not heard. */
const QUIET = 1 / 8;

export class JitterBuffer {
  /** The margin now, in samples. */
  margin: number;
  underruns = 0;
  late = 0;
  lost = 0;
  /** Samples let go because the queue held more than it needed. */
  letGo = 0;
  /** Breaks in what plays: underruns, and each time something was let go. */
  breaks = 0;
  private readonly chunks = new Map<number, Float32Array>();
  /** Chunks that will never come (refused): silence in their place. */
  private readonly refused = new Set<number>();
  /** The next chunk to start; undefined until the first one comes. */
  private next: number | undefined;
  private current: Float32Array | undefined;
  private offset = 0;
  private waiting = true;
  private readonly roundTrips: number[] = [];
  private readonly levels: number[] = [];
  private watchedFor = 0;
  private lowest = Infinity;
  /** Samples more than it needs that it held all through the last watch (0 for none). */
  private tooMuch = 0;

  constructor(private readonly options: JitterBufferOptions) {
    this.margin = options.margin.start;
  }

  /**
   * An answered chunk, and how long it took to come back (samples, from when it was sent; none for a
   * round trip that says nothing of the connection); a chunk whose turn has passed is counted late and dropped.
   */
  put(seq: number, samples: Float32Array, roundTrip?: number): void {
    if (roundTrip !== undefined) this.tookRoundTrip(roundTrip);
    this.remember(this.levels, rms(samples));
    if (this.next === undefined) this.next = seq;
    if (seq < this.next) {
      this.late++;
      return;
    }
    this.chunks.set(seq, samples);
  }

  /** A chunk that will never come: its turn plays silence. */
  refuse(seq: number): void {
    if (this.next === undefined) this.next = seq;
    if (seq < this.next) return;
    this.refused.add(seq);
    this.lost++;
  }

  /** Samples queued from the one playing next on, as far as they follow each other. */
  get queued(): number {
    if (this.next === undefined) return 0;
    let total = this.current ? this.current.length - this.offset : 0;
    for (let seq = this.current ? this.next + 1 : this.next; ; seq++) {
      const chunk = this.chunks.get(seq);
      if (chunk) total += chunk.length;
      else if (this.refused.has(seq)) total += this.options.chunk;
      else return total;
    }
  }

  /** Fills `out` with what plays next: the chunks in order, or silence while it waits. */
  take(out: Float32Array, onStart?: OnChunkStart): void {
    let filled = 0;
    while (filled < out.length) {
      if (this.waiting) {
        if (this.queued < this.options.chunk + this.margin) break;
        this.waiting = false;
        this.shed(0);
      }
      if (!this.current) this.shed(this.options.chunk);
      if (!this.current && !this.startNext(filled, onStart)) {
        this.underruns++;
        this.breaks++;
        this.waiting = true;
        break;
      }
      const current = this.current!;
      const count = Math.min(out.length - filled, current.length - this.offset);
      out.set(current.subarray(this.offset, this.offset + count), filled);
      filled += count;
      this.offset += count;
      if (this.offset === current.length) {
        this.current = undefined;
        this.next!++;
      }
    }
    out.fill(0, filled);
    this.watch(out.length);
  }

  private tookRoundTrip(roundTrip: number): void {
    this.remember(this.roundTrips, roundTrip);
    const sorted = [...this.roundTrips].sort((a, b) => a - b);
    const at = (share: number) => sorted[Math.floor(share * (sorted.length - 1))];
    const { min, max } = this.options.margin;
    this.margin = Math.min(max, min + at(0.99) - at(0.5));
  }

  private remember(list: number[], value: number): void {
    list.push(value);
    if (list.length > this.options.remember) list.shift();
  }

  /**
   * How much it held more than it needs all through the last watch, once that is a chunk or more (less is
   * the play of the arrivals and of the render quanta, and letting it go would only break what plays).
   */
  private watch(played: number): void {
    if (this.waiting) {
      [this.lowest, this.watchedFor, this.tooMuch] = [Infinity, 0, 0];
      return;
    }
    this.lowest = Math.min(this.lowest, this.queued);
    this.watchedFor += played;
    if (this.watchedFor >= this.options.watch) {
      const over = this.lowest - this.margin;
      this.tooMuch = over >= this.options.chunk ? Math.floor(over) : 0;
      [this.lowest, this.watchedFor] = [Infinity, 0];
    }
  }

  /**
   * Between two chunks: lets whole chunks go while more than `excess` over two chunks and the margin wait;
   * then, if it held too much, that much from the start of the next chunk if it is a quiet one.
   */
  private shed(excess: number): void {
    while (this.queued >= 2 * this.options.chunk + this.margin + excess) {
      this.breaks++;
      const seq = this.next!;
      const chunk = this.chunks.get(seq);
      if (chunk) this.letGo += chunk.length;
      this.chunks.delete(seq);
      this.refused.delete(seq);
      this.next = seq + 1;
    }
    const next = this.chunks.get(this.next!);
    if (this.tooMuch === 0 || !next || rms(next) >= QUIET * Math.max(...this.levels)) return;
    // Its delay is not measured: the chunk's first sample never plays.
    this.chunks.delete(this.next!);
    this.current = next;
    this.offset = Math.min(this.tooMuch, next.length - 1);
    this.letGo += this.offset;
    this.breaks++;
    this.tooMuch = 0;
  }

  private startNext(offset: number, onStart?: OnChunkStart): boolean {
    const seq = this.next;
    if (seq === undefined) return false;
    const chunk = this.chunks.get(seq);
    if (chunk) {
      this.chunks.delete(seq);
      this.current = chunk;
      onStart?.(seq, offset);
    } else if (this.refused.delete(seq)) {
      this.current = new Float32Array(this.options.chunk);
    } else return false;
    this.offset = 0;
    return true;
  }
}

function rms(samples: Float32Array): number {
  let sum = 0;
  for (const value of samples) sum += value * value;
  return Math.sqrt(sum / Math.max(1, samples.length));
}
