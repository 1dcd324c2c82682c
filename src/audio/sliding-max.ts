// The largest of the last N values pushed, in O(1) amortised per value (a monotonic deque).

export class SlidingMax {
  private readonly indices: Float64Array;
  private readonly values: Float64Array;
  private readonly mask: number;
  private head = 0;
  private tail = 0;

  /** `capacity`: the most values a window can hold. */
  constructor(capacity: number) {
    const size = 2 ** Math.ceil(Math.log2(capacity + 1));
    this.indices = new Float64Array(size);
    this.values = new Float64Array(size);
    this.mask = size - 1;
  }

  /** Adds the value at `index` (indices increase by one each push). */
  push(index: number, value: number): void {
    while (this.tail > this.head && this.values[(this.tail - 1) & this.mask] <= value) this.tail--;
    this.indices[this.tail & this.mask] = index;
    this.values[this.tail & this.mask] = value;
    this.tail++;
  }

  /** The largest value among those pushed with index >= `from`. */
  maxFrom(from: number): number {
    while (this.indices[this.head & this.mask] < from) this.head++;
    return this.values[this.head & this.mask];
  }
}
