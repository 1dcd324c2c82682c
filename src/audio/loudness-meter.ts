// Measures a stream of planar blocks per ITU-R BS.1770-4 / EBU R128: integrated loudness (400 ms blocks,
// 75 % overlap, gates -70 LUFS and -10 LU), loudness range (EBU Tech 3342: 3 s blocks every 100 ms),
// sample peak and true peak, and a timeline of one short-term loudness and one true peak per second.
// Memory is constant but for the timeline (two numbers a second): the blocks go into histograms.
import { channelWeights } from './channel-weights';
import { KWeighting } from './k-weighting';
import { energyToLufs, LoudnessHistogram } from './loudness-histogram';
import type { Planar } from './pcm-codec';
import { TruePeakMeter } from './true-peak-meter';

export interface LoudnessMeasurement {
  /** LUFS; -Infinity when no block reaches the absolute gate (silence or near-silence). */
  integratedLufs: number;
  /**
   * The stream is shorter than one 400 ms gating block, so `integratedLufs` is the loudness of its whole
   * length (gated at -70 LUFS like a block): BS.1770 has no block to measure, and such a clip is not silent.
   */
  measuredWhole: boolean;
  /** LU */
  loudnessRangeLu: number;
  /** dBTP; -Infinity for digital silence. */
  truePeakDbtp: number;
  /** dBFS */
  samplePeakDbfs: number;
  seconds: number;
  /** One value per second of the stream (its length rounded to whole seconds). */
  perSecond: {
    /** LUFS of the 3 s ending at second i+1 (of what there is before 3 s); -Infinity for digital silence. */
    shortTermLufs: number[];
    /** dBTP: the highest true peak within second i; -Infinity for digital silence. */
    truePeakDbtp: number[];
  };
}

const SUB_BLOCKS_PER_SECOND = 10; // 100 ms: the hop of both the 400 ms and the 3 s blocks
const MOMENTARY_SUB_BLOCKS = 4;
const SHORT_TERM_SUB_BLOCKS = 30;
/** BS.1770's absolute gate, applied to a stream too short for a block as it is to each block. */
const ABSOLUTE_GATE_LUFS = -70;

export class LoudnessMeter {
  private readonly weights: number[];
  private readonly filters: KWeighting[];
  private readonly peaks: TruePeakMeter;
  private readonly gating = new LoudnessHistogram();
  private readonly shortTerm = new LoudnessHistogram();
  /** Short-term energy at each whole second. */
  private readonly shortTermPerSecond: number[] = [];
  // The last 30 sub-blocks' weighted energy sums and sample counts (a ring).
  private readonly subSums = new Float64Array(SHORT_TERM_SUB_BLOCKS);
  private readonly subFrames = new Float64Array(SHORT_TERM_SUB_BLOCKS);
  private subBlocks = 0;
  private subSum = 0;
  private frames = 0;
  private subBlockEnd: number;

  /** `measurePeaks: false` measures the loudness alone (the peaks then read -Infinity), for a pass that only looks for a gain. */
  constructor(
    private readonly sampleRate: number,
    channels: number,
    channelMask = 0,
    private readonly measurePeaks = true,
  ) {
    this.weights = channelWeights(channels, channelMask);
    this.filters = this.weights.map(() => new KWeighting(sampleRate));
    this.peaks = new TruePeakMeter(channels, sampleRate);
    this.subBlockEnd = this.boundary(1);
  }

  add(samples: Planar, frames: number): void {
    if (this.measurePeaks) this.peaks.add(samples, frames);
    let at = 0;
    while (at < frames) {
      const end = Math.min(frames, at + (this.subBlockEnd - this.frames));
      for (let c = 0; c < this.weights.length; c++) {
        if (this.weights[c] !== 0) this.subSum += this.weights[c] * this.filters[c].sumOfSquares(samples[c], at, end);
      }
      this.frames += end - at;
      at = end;
      if (this.frames === this.subBlockEnd) this.closeSubBlock();
    }
  }

  finish(): LoudnessMeasurement {
    const { truePeak, samplePeak, truePeakPerSecond } = this.peaks.finish();
    const shortTerm = [...this.shortTermPerSecond];
    // A part second of half a second or more counts as one: its value is the short-term loudness at the end.
    if (shortTerm.length < Math.round(this.frames / this.sampleRate)) shortTerm.push(this.shortTermAtEnd());
    const measuredWhole = this.subBlocks < MOMENTARY_SUB_BLOCKS && this.frames > 0;
    return {
      integratedLufs: measuredWhole ? this.wholeLength() : this.gating.integrated(),
      measuredWhole,
      loudnessRangeLu: this.shortTerm.range(),
      truePeakDbtp: 20 * Math.log10(truePeak),
      samplePeakDbfs: 20 * Math.log10(samplePeak),
      seconds: this.frames / this.sampleRate,
      perSecond: {
        shortTermLufs: shortTerm.map(energyToLufs),
        truePeakDbtp: truePeakPerSecond.map((peak) => 20 * Math.log10(peak)),
      },
    };
  }

  /** Sub-block k ends at frame round(k * rate / 10): exact even when 100 ms is not a whole number of frames. */
  private boundary(k: number): number {
    return Math.round((k * this.sampleRate) / SUB_BLOCKS_PER_SECOND);
  }

  private closeSubBlock(): void {
    const slot = this.subBlocks % SHORT_TERM_SUB_BLOCKS;
    this.subSums[slot] = this.subSum;
    this.subFrames[slot] = this.subBlockEnd - this.boundary(this.subBlocks);
    this.subBlocks++;
    this.subSum = 0;
    this.subBlockEnd = this.boundary(this.subBlocks + 1);
    if (this.subBlocks >= MOMENTARY_SUB_BLOCKS) this.gating.add(this.meanOfLast(MOMENTARY_SUB_BLOCKS));
    if (this.subBlocks >= SHORT_TERM_SUB_BLOCKS) this.shortTerm.add(this.meanOfLast(SHORT_TERM_SUB_BLOCKS));
    if (this.subBlocks % SUB_BLOCKS_PER_SECOND === 0)
      this.shortTermPerSecond.push(this.meanOfLast(Math.min(this.subBlocks, SHORT_TERM_SUB_BLOCKS)));
  }

  /** The loudness of everything added, as one block (for a stream shorter than a gating block), gated at -70 LUFS. */
  private wholeLength(): number {
    const lufs = energyToLufs(
      this.meanOfLast(this.subBlocks, this.subSum, this.frames - this.boundary(this.subBlocks)),
    );
    return lufs >= ABSOLUTE_GATE_LUFS ? lufs : -Infinity;
  }

  /** The 3 s ending with the last frame: the open sub-block and the closed ones before it. */
  private shortTermAtEnd(): number {
    const open = this.frames - this.boundary(this.subBlocks);
    const closed = Math.min(this.subBlocks, SHORT_TERM_SUB_BLOCKS - (open > 0 ? 1 : 0));
    return this.meanOfLast(closed, this.subSum, open);
  }

  /** Mean energy of the last `count` closed sub-blocks, plus an open one's sum and frames if given. */
  private meanOfLast(count: number, openSum = 0, openFrames = 0): number {
    let sum = openSum;
    let frames = openFrames;
    for (let k = this.subBlocks - count; k < this.subBlocks; k++) {
      sum += this.subSums[k % SHORT_TERM_SUB_BLOCKS];
      frames += this.subFrames[k % SHORT_TERM_SUB_BLOCKS];
    }
    return sum / frames;
  }
}
