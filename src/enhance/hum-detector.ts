// Finds mains hum in a file, streamed. Half-second windows spread over the whole file (60 s of audio at
// most, so the cost does not grow with the file) are mixed to mono, low-passed and decimated to a
// ~3 kHz analysis rate, and kept. At the end, the quietest quarter of them decides: hum is steady
// and still there when nobody speaks, while a voice's harmonics are not. In those windows, for 50 and
// then 60 Hz mains, a Hann-windowed Goertzel measures each harmonic 1..10 against the spectrum a few
// hertz either side, over a fine grid of fundamentals (mains drift), and the best one is refined.
import type { Planar } from '../audio/pcm-codec';
import { lowPass, type FilterCascade } from './biquad';

export interface HumReport {
  /** The mains frequency the hum belongs to; null: the file has no hum worth removing. */
  mainsHz: 50 | 60 | null;
  /** The hum's fundamental as measured (mains drifts by tenths of a hertz); null without hum. */
  fundamentalHz: number | null;
  /** The harmonics (multiples of the fundamental) that stand out: the ones to notch. */
  harmonicsHz: number[];
  /** How far the strongest harmonic stands above the spectrum around it (dB; the best candidate's, even without hum). */
  prominenceDb: number;
}

/** Short enough to fall within pauses, long enough (2 Hz resolution) to tell 50 Hz harmonics from 60 Hz ones. */
const WINDOW_SECONDS = 0.5;
const MAX_WINDOWS = 120;
/** Harmonics up to the 10th (600 Hz) are audible hum and lie under the analysis band. */
const HARMONICS = 10;
const ANALYSIS_RATE = 3000;
const ANTI_ALIAS_HZ = 800;
/** The anti-alias filter's start-up, discarded before each window. */
const WARMUP_SECONDS = 0.02;
/** The quietest quarter of the windows decides, at least 3 and at most 16 (bounds the work). */
const QUIET_SHARE = 0.25;
const QUIET_MIN = 3;
const QUIET_MAX = 16;
/** A frequency's power in the quiet windows is its lower quartile across them: hum is in nearly all, a voice fragment in few. */
const QUIET_QUANTILE = 0.25;
/** Mains stays within +/-0.5 Hz; the margin keeps a true peak off the grid's edges. */
const DRIFT_HZ = 0.6;
const GRID_HZ = 0.05;
const REFINE_STEP_HZ = 0.125;
/** Where the neighbourhood is measured, beyond the drift range: the Hann main lobe ends 4 Hz from a peak. */
const FLOOR_OFFSETS_HZ = [5, 6, 7, 8, 9, 10];
/** The strongest harmonic must stand this far out for a hum; noise and voices stay well under it. */
const DETECT_DB = 12;
/** Harmonics of a found hum that stand this far out are notched (a notch there costs nothing audible). */
const NOTCH_DB = 6;

/** One analysis window: mono, low-passed and decimated, with its broadband energy. */
interface AnalysisWindow {
  start: number;
  filter: FilterCascade | null;
  samples: Float32Array;
  energy: number;
}

interface Candidate {
  mainsHz: 50 | 60;
  fundamentalHz: number;
  /** Per harmonic number, its frequency and how far it stands out (dB). */
  harmonics: Array<{ frequencyHz: number; prominenceDb: number }>;
  /** Evidence for this mains: the harmonics' prominence beyond the notch threshold, summed. */
  score: number;
}

export class HumDetector {
  private readonly factor: number;
  private readonly rate: number;
  private readonly windowFrames: number;
  private readonly warmupFrames: number;
  private readonly windows: AnalysisWindow[] = [];
  private position = 0;
  private next = 0;
  private scratch = new Float32Array(0);

  constructor(
    private readonly sampleRate: number,
    private readonly channels: number,
    totalFrames: number,
  ) {
    this.factor = Math.max(1, Math.floor(sampleRate / ANALYSIS_RATE));
    this.rate = sampleRate / this.factor;
    const length = Math.round(WINDOW_SECONDS * this.rate);
    this.windowFrames = length * this.factor;
    this.warmupFrames = Math.round(WARMUP_SECONDS * sampleRate);
    // Windows overlap by half at most (short files are read whole), and spread evenly over long ones.
    const span = totalFrames - this.windowFrames;
    const count = span < 0 ? 0 : Math.min(MAX_WINDOWS, Math.floor(span / (this.windowFrames / 2)) + 1);
    for (let i = 0; i < count; i++) {
      this.windows.push({
        start: count === 1 ? 0 : Math.round((i * span) / (count - 1)),
        filter: this.factor > 1 ? lowPass(sampleRate, ANTI_ALIAS_HZ, 4) : null,
        samples: new Float32Array(length),
        energy: 0,
      });
    }
  }

  add(samples: Planar, frames: number): void {
    const blockStart = this.position;
    this.position += frames;
    while (this.next < this.windows.length && this.windows[this.next].start + this.windowFrames <= blockStart) this.next++;
    for (let w = this.next; w < this.windows.length; w++) {
      const window = this.windows[w];
      const from = Math.max(blockStart, window.start - this.warmupFrames);
      const to = Math.min(this.position, window.start + this.windowFrames);
      if (from >= this.position) break;
      if (to > from) this.feed(window, samples, blockStart, from, to);
    }
  }

  finish(): HumReport {
    const complete = this.windows.filter((w) => w.start + this.windowFrames <= this.position);
    const quiet = complete
      .sort((a, b) => a.energy - b.energy)
      .slice(0, Math.min(QUIET_MAX, Math.max(QUIET_MIN, Math.ceil(complete.length * QUIET_SHARE))));
    if (quiet.length === 0) return { mainsHz: null, fundamentalHz: null, harmonicsHz: [], prominenceDb: 0 };
    const spectrum = new QuietSpectrum(quiet.map((w) => hann(w.samples)), this.rate);
    const limitHz = this.factor > 1 ? ANTI_ALIAS_HZ : 0.45 * this.sampleRate;
    const [fifty, sixty] = ([50, 60] as const).map((mains) => measureMains(spectrum, mains, limitHz));
    const best = sixty.score > fifty.score ? sixty : fifty;
    const prominenceDb = Math.max(0, ...best.harmonics.map((h) => h.prominenceDb));
    if (prominenceDb < DETECT_DB) return { mainsHz: null, fundamentalHz: null, harmonicsHz: [], prominenceDb };
    const harmonicsHz = best.harmonics.filter((h) => h.prominenceDb >= NOTCH_DB).map((h) => h.frequencyHz);
    return { mainsHz: best.mainsHz, fundamentalHz: best.fundamentalHz, harmonicsHz, prominenceDb };
  }

  /** Frames [from, to) of the block that starts at `blockStart`, into `window`. */
  private feed(window: AnalysisWindow, samples: Planar, blockStart: number, from: number, to: number): void {
    const n = to - from;
    if (this.scratch.length < n) this.scratch = new Float32Array(n);
    const mono = this.scratch;
    mono.fill(0, 0, n);
    for (let c = 0; c < this.channels; c++) {
      const channel = samples[c];
      for (let i = 0; i < n; i++) mono[i] += channel[from - blockStart + i] / this.channels;
    }
    const first = Math.max(0, window.start - from);
    for (let i = first; i < n; i++) window.energy += mono[i] * mono[i];
    window.filter?.process(mono, n);
    const offset = from + first - window.start;
    for (let i = first + ((this.factor - (offset % this.factor)) % this.factor); i < n; i += this.factor) {
      window.samples[(from + i - window.start) / this.factor] = mono[i];
    }
  }
}

/** Power at a frequency in the quiet windows: their lower quartile, so it is what nearly all of them hold. */
class QuietSpectrum {
  constructor(
    private readonly windows: Float32Array[],
    readonly rate: number,
  ) {}

  at(frequencyHz: number): number {
    const powers = this.windows.map((w) => goertzel(w, frequencyHz / this.rate)).sort((a, b) => a - b);
    return powers[Math.floor(QUIET_QUANTILE * (powers.length - 1))];
  }
}

function measureMains(spectrum: QuietSpectrum, mainsHz: 50 | 60, limitHz: number): Candidate {
  const numbers: number[] = [];
  for (let h = 1; h <= HARMONICS && h * (mainsHz + DRIFT_HZ) + FLOOR_OFFSETS_HZ.at(-1)! < limitHz; h++) numbers.push(h);
  // Each harmonic's neighbourhood, beyond where it can drift; the median shrugs off a neighbour's peak.
  const floors = numbers.map((h) =>
    median(FLOOR_OFFSETS_HZ.flatMap((offset) => [-1, 1].map((side) => spectrum.at(h * mainsHz + side * (h * DRIFT_HZ + offset))))),
  );
  const prominence = (i: number, fundamentalHz: number) => decibels(spectrum.at(numbers[i] * fundamentalHz), floors[i]);
  // Summing dB (not power) lets every harmonic have its say, however weak the fundamental.
  const steps = Math.round((2 * DRIFT_HZ) / GRID_HZ);
  const fundamentalAt = (step: number) => mainsHz - DRIFT_HZ + step * GRID_HZ;
  const scores = Array.from({ length: steps + 1 }, (_, step) => numbers.reduce((sum, _h, i) => sum + Math.max(0, prominence(i, fundamentalAt(step))), 0));
  const top = scores.indexOf(Math.max(...scores));
  // A peak on the grid's edge lies outside mains' range: a tone, not hum.
  if (top === 0 || top === steps) return { mainsHz, fundamentalHz: fundamentalAt(top), harmonics: [], score: 0 };
  const coarse = fundamentalAt(top);
  // The fundamental, refined from the harmonics that stand out: each one's own peak, divided by its number.
  let sum = 0;
  let weights = 0;
  numbers.forEach((h, i) => {
    const db = prominence(i, coarse);
    if (db < NOTCH_DB) return;
    const peak = peakNear(spectrum, h * coarse, (h * GRID_HZ) / 2 + REFINE_STEP_HZ);
    const weight = h * h * Math.min(10 ** (db / 10), 1e3);
    sum += (weight * peak) / h;
    weights += weight;
  });
  const fundamentalHz = weights > 0 ? sum / weights : coarse;
  const harmonics = numbers.map((h, i) => ({ frequencyHz: h * fundamentalHz, prominenceDb: prominence(i, fundamentalHz) }));
  const score = harmonics.reduce((total, h) => total + Math.max(0, h.prominenceDb - NOTCH_DB), 0);
  return { mainsHz, fundamentalHz, harmonics, score };
}

/** Where the spectrum peaks within +/-reach of a frequency: the grid's best point, refined by a parabola on dB. */
function peakNear(spectrum: QuietSpectrum, frequencyHz: number, reach: number): number {
  const n = Math.ceil(reach / REFINE_STEP_HZ);
  const levels = Array.from({ length: 2 * n + 3 }, (_, k) => 10 * Math.log10(spectrum.at(frequencyHz + (k - n - 1) * REFINE_STEP_HZ) + 1e-30));
  let top = 1;
  for (let k = 2; k <= 2 * n + 1; k++) if (levels[k] > levels[top]) top = k;
  const [before, peak, after] = [levels[top - 1], levels[top], levels[top + 1]];
  const curvature = before - 2 * peak + after;
  return frequencyHz + (top - n - 1 + (curvature < 0 ? (before - after) / (2 * curvature) : 0)) * REFINE_STEP_HZ;
}

function hann(samples: Float32Array): Float32Array {
  const n = samples.length;
  return samples.map((s, i) => s * Math.sin((Math.PI * (i + 0.5)) / n) ** 2);
}

/** |DFT|^2 of `samples` at `cycles` per sample. */
function goertzel(samples: Float32Array, cycles: number): number {
  const coefficient = 2 * Math.cos(2 * Math.PI * cycles);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i] + coefficient * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return s1 * s1 + s2 * s2 - coefficient * s1 * s2;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Digital silence has neither power nor floor: it stands out by 0 dB. */
function decibels(power: number, floor: number): number {
  return 10 * Math.log10((power + 1e-30) / (floor + 1e-30));
}
