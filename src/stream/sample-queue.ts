// A first-in first-out queue of samples of one channel: a live stream's output waits here between the
// denoiser, which gives it in bursts (a 10 ms frame at a time, behind its filters), and the messages,
// which take exactly as many samples as they brought.

export class SampleQueue {
  private data: Float32Array;
  private start = 0;
  private end = 0;

  /** Starts holding `silence` zeros: the stream's latency. */
  constructor(silence: number) {
    this.data = new Float32Array(Math.max(1024, silence * 2));
    this.end = silence;
  }

  get length(): number {
    return this.end - this.start;
  }

  /** Copies `samples` in; returns where they now are (a view, valid until the next push). */
  push(samples: Float32Array): Float32Array {
    if (this.end + samples.length > this.data.length) this.makeRoom(samples.length);
    this.data.set(samples, this.end);
    this.end += samples.length;
    return this.data.subarray(this.end - samples.length, this.end);
  }

  /** Bytes the queue holds (its buffer, which grows to the most it has held and stays). */
  memoryBytes(): number {
    return this.data.byteLength;
  }

  /** Takes the first `count` samples (a copy). */
  take(count: number): Float32Array {
    if (count > this.length) throw new Error(`the stream's queue holds ${this.length} samples, ${count} were asked`);
    const out = this.data.slice(this.start, this.start + count);
    this.start += count;
    return out;
  }

  private makeRoom(more: number): void {
    const length = this.length;
    const target = length + more > this.data.length ? new Float32Array((length + more) * 2) : this.data;
    if (target === this.data) this.data.copyWithin(0, this.start, this.end);
    else target.set(this.data.subarray(this.start, this.end));
    this.data = target;
    this.start = 0;
    this.end = length;
  }
}
