// Gated loudness statistics in constant memory: block energies are counted in 0.01 LU bins (with their
// exact energy sums), so an hour of audio and ten hours cost the same and the result differs from
// keeping every block by far less than 0.01 LU.

const ABSOLUTE_GATE_LUFS = -70;
const TOP_LUFS = 10; // louder blocks (only possible in float files) share the top bin
const BINS_PER_LU = 100;
const BIN_COUNT = (TOP_LUFS - ABSOLUTE_GATE_LUFS) * BINS_PER_LU + 1;

/** BS.1770's loudness of a mean square energy (already channel-weighted). */
export function energyToLufs(energy: number): number {
  return -0.691 + 10 * Math.log10(energy);
}

export class LoudnessHistogram {
  private readonly counts = new Float64Array(BIN_COUNT);
  private readonly energies = new Float64Array(BIN_COUNT);

  /** Adds one block; blocks under the absolute gate (-70 LUFS) are not counted, as the standard says. */
  add(energy: number): void {
    const lufs = energyToLufs(energy);
    if (!(lufs >= ABSOLUTE_GATE_LUFS)) return;
    const bin = Math.min(BIN_COUNT - 1, Math.floor((lufs - ABSOLUTE_GATE_LUFS) * BINS_PER_LU));
    this.counts[bin]++;
    this.energies[bin] += energy;
  }

  /** Integrated loudness (BS.1770-4: relative gate 10 LU under the absolutely gated mean); -Infinity when nothing passes the gate. */
  integrated(): number {
    const first = this.relativeGateBin(10);
    if (first < 0) return -Infinity;
    let count = 0;
    let energy = 0;
    for (let i = first; i < BIN_COUNT; i++) {
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
    for (let i = first; i < BIN_COUNT; i++) total += this.counts[i];
    return this.percentile(first, total, 0.95) - this.percentile(first, total, 0.1);
  }

  /** The first bin at or above the relative gate, -1 when no block passed the absolute gate. */
  private relativeGateBin(gateLu: number): number {
    let count = 0;
    let energy = 0;
    for (let i = 0; i < BIN_COUNT; i++) {
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
    for (let i = first; i < BIN_COUNT; i++) {
      seen += this.counts[i];
      if (seen > rank) return ABSOLUTE_GATE_LUFS + (i + 0.5) / BINS_PER_LU;
    }
    return TOP_LUFS;
  }
}
