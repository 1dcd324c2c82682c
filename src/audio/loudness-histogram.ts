// Gated loudness statistics in constant memory: block energies are counted in 0.01 LU bins (with their
// exact energy sums), so an hour of audio and ten hours cost the same and the result differs from
// keeping every block by far less than 0.01 LU. Integer files stay under +10 LUFS; a float file can be
// louder by any amount, and the bins then grow to reach its loudest block.

const ABSOLUTE_GATE_LUFS = -70;
/** The bins made at first: up to +10 LUFS, the most a full-scale integer file can hold. */
const FIRST_TOP_LUFS = 10;
const BINS_PER_LU = 100;

/** BS.1770's loudness of a mean square energy (already channel-weighted). */
export function energyToLufs(energy: number): number {
  return -0.691 + 10 * Math.log10(energy);
}

export class LoudnessHistogram {
  private counts = new Float64Array((FIRST_TOP_LUFS - ABSOLUTE_GATE_LUFS) * BINS_PER_LU);
  private energies = new Float64Array(this.counts.length);

  /** Adds one block; blocks under the absolute gate (-70 LUFS) are not counted, as the standard says. */
  add(energy: number): void {
    const lufs = energyToLufs(energy);
    if (!(lufs < Infinity)) throw new RangeError(`a block's energy is ${energy}: loudness needs finite samples`);
    if (lufs < ABSOLUTE_GATE_LUFS) return;
    const bin = Math.floor((lufs - ABSOLUTE_GATE_LUFS) * BINS_PER_LU);
    if (bin >= this.counts.length) this.grow(bin + 1);
    this.counts[bin]++;
    this.energies[bin] += energy;
  }

  /** Integrated loudness (BS.1770-4: relative gate 10 LU under the absolutely gated mean); -Infinity when nothing passes the gate. */
  integrated(): number {
    const first = this.relativeGateBin(10);
    if (first < 0) return -Infinity;
    let count = 0;
    let energy = 0;
    for (let i = first; i < this.counts.length; i++) {
      count += this.counts[i];
      energy += this.energies[i];
    }
    return energyToLufs(energy / count);
  }

  /** Loudness range (EBU Tech 3342: relative gate 20 LU, 10th to 95th percentile); 0 when nothing passes. */
  range(): number {
    const first = this.relativeGateBin(20);
    if (first < 0) return 0;
    let total = 0;
    for (let i = first; i < this.counts.length; i++) total += this.counts[i];
    return this.percentile(first, total, 0.95) - this.percentile(first, total, 0.1);
  }

  /** The first bin at or above the relative gate, -1 when no block passed the absolute gate. */
  private relativeGateBin(gateLu: number): number {
    let count = 0;
    let energy = 0;
    for (let i = 0; i < this.counts.length; i++) {
      count += this.counts[i];
      energy += this.energies[i];
    }
    if (count === 0) return -1;
    const gate = energyToLufs(energy / count) - gateLu;
    // A bin belongs above the gate when its centre does: the error is under half a bin (0.005 LU).
    return Math.max(0, Math.ceil((gate - ABSOLUTE_GATE_LUFS) * BINS_PER_LU - 0.5));
  }

  private percentile(first: number, total: number, fraction: number): number {
    const rank = Math.round((total - 1) * fraction); // nearest rank among the gated blocks, sorted
    let seen = 0;
    for (let i = first; i < this.counts.length; i++) {
      seen += this.counts[i];
      if (seen > rank) return ABSOLUTE_GATE_LUFS + (i + 0.5) / BINS_PER_LU;
    }
    return ABSOLUTE_GATE_LUFS + this.counts.length / BINS_PER_LU;
  }

  /** At least `bins` bins, doubling so that a file climbing in level costs few copies. */
  private grow(bins: number): void {
    const size = Math.max(bins, 2 * this.counts.length);
    const counts = new Float64Array(size);
    const energies = new Float64Array(size);
    counts.set(this.counts);
    energies.set(this.energies);
    this.counts = counts;
    this.energies = energies;
  }
}
