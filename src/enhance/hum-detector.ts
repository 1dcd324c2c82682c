// Finds mains hum in a file, streamed. Half-second windows spread over the whole file (60 s of audio at
// most, so the cost does not grow with the file) are mixed to mono, low-passed and decimated to a
// ~3 kHz analysis rate, and kept. At the end, the quietest quarter of them decides whether there is
// hum: hum is steady and still there when nobody speaks, a voice's harmonics are not. In those
// windows, for 50 and for 60 Hz mains, Hann-windowed Goertzels measure harmonics 1..10 against the
// spectrum a few hertz either side, over a grid of fundamentals (mains drifts). Then all the windows
// together, where the speech under the hum averages out, place the fundamental to hundredths of a hertz.
// Hum far under the voice is left alone: it is inaudible, and its subtraction would take a little of the
// voice within a hertz of each harmonic for nothing audible.
import type { Planar } from '../audio/pcm-codec';
import { lowPass, type FilterCascade } from './biquad';

export interface HumReport {
  /** The mains frequency the hum belongs to; null: the file has no hum worth removing. */
  mainsHz: 50 | 60 | null;
  /** The hum's fundamental as measured (mains drifts by tenths of a hertz); null without hum. */
  fundamentalHz: number | null;
  /** The harmonics (multiples of the fundamental) that stand out: the ones to subtract. */
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
/** The quietest quarter of the windows decides, at least 6 and at most 16 (bounds the work). */
const QUIET_SHARE = 0.25;
const QUIET_MIN = 6;
const QUIET_MAX = 16;
/** Mains stays within +/-0.5 Hz; the margin keeps a true peak off the grid's edges. */
const DRIFT_HZ = 0.6;
const GRID_HZ = 0.05;
const REFINE_STEP_HZ = 0.125;
/** Where the neighbourhood is measured, beyond the drift range: the Hann main lobe ends 4 Hz from a peak. */
const FLOOR_OFFSETS_HZ = [5, 6, 7, 8, 9, 10];
/** One of the first three harmonics (where hum always has energy) must stand this far out: noise and voices stay under it. */
const DETECT_DB = 12;
const CORE_HARMONICS = 3;
/** Harmonics of a found hum that stand this far out are subtracted. */
const SUBTRACT_DB = 6;
/**
 * Hum whose harmonics together lie this far under the voice (the mean power of the louder half of the
 * windows) is not removed: in the pauses it sits near the threshold of hearing at 50-60 Hz, and its
 * subtraction would cost the voice more than it takes out.
 */
const WORTH_REMOVING_DB = -25;

/** One analysis window: mono, low-passed and decimated, with its broadband energy. */
interface AnalysisWindow {
  start: number;
  filter: FilterCascade | null;
  samples: Float32Array;
  energy: number;
}

interface Candidate {
  mainsHz: 50 | 60;
  /** On the grid: within GRID_HZ / 2 of the best fit. */
  fundamentalHz: number;
  /** How far each harmonic stands out (dB) at that fundamental. */
  harmonics: Array<{ number: number; prominenceDb: number }>;
  /** Evidence for this mains: the harmonics' prominence beyond the subtraction threshold, summed. */
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
    while (this.next < this.windows.length && this.windows[this.next].start + this.windowFrames <= blockStart)
      this.next++;
    for (let w = this.next; w < this.windows.length; w++) {
      const window = this.windows[w];
      const from = Math.max(blockStart, window.start - this.warmupFrames);
      const to = Math.min(this.position, window.start + this.windowFrames);
      if (from >= this.position) break;
      if (to > from) this.feed(window, samples, blockStart, from, to);
    }
  }

  finish(): HumReport {
    const complete = this.windows
      .filter((w) => w.start + this.windowFrames <= this.position)
      .sort((a, b) => a.energy - b.energy);
    if (complete.length === 0) return { mainsHz: null, fundamentalHz: null, harmonicsHz: [], prominenceDb: 0 };
    const quietCount = Math.min(QUIET_MAX, Math.max(QUIET_MIN, Math.ceil(complete.length * QUIET_SHARE)));
    const shaped = complete.map((w) => hann(w.samples));
    const quiet = new Spectrum(shaped.slice(0, quietCount), this.rate, lowerQuartile);
    const limitHz = this.factor > 1 ? ANTI_ALIAS_HZ : 0.45 * this.sampleRate;
    const [fifty, sixty] = ([50, 60] as const).map((mains) => measureMains(quiet, mains, limitHz));
    const best = sixty.score > fifty.score ? sixty : fifty;
    const prominenceDb = Math.max(0, ...best.harmonics.map((h) => h.prominenceDb));
    const core = best.harmonics.filter((h) => h.number <= CORE_HARMONICS);
    if (!core.some((h) => h.prominenceDb >= DETECT_DB))
      return { mainsHz: null, fundamentalHz: null, harmonicsHz: [], prominenceDb };
    const subtracted = best.harmonics.filter((h) => h.prominenceDb >= SUBTRACT_DB).map((h) => h.number);
    if (humUnderVoiceDb(quiet, best, subtracted, complete, this.windowFrames) < WORTH_REMOVING_DB)
      return { mainsHz: null, fundamentalHz: null, harmonicsHz: [], prominenceDb };
    const fundamentalHz = refineFundamental(new Spectrum(shaped, this.rate, mean), best, subtracted);
    return {
      mainsHz: best.mainsHz,
      fundamentalHz,
      harmonicsHz: subtracted.map((h) => h * fundamentalHz),
      prominenceDb,
    };
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

/** A power spectrum over several windows, measured only where asked: one statistic of the windows' powers. */
class Spectrum {
  constructor(
    private readonly windows: Float32Array[],
    private readonly rate: number,
    private readonly statistic: (ascending: number[]) => number,
  ) {}

  at(frequencyHz: number): number {
    return this.statistic(this.windows.map((w) => goertzel(w, frequencyHz / this.rate)).sort((a, b) => a - b));
  }

  /** Harmonic `h` of `mainsHz`'s neighbourhood, beyond where it can drift; the median shrugs off a neighbour's peak. */
  floor(h: number, mainsHz: number): number {
    return median(
      FLOOR_OFFSETS_HZ.flatMap((offset) =>
        [-1, 1].map((side) => this.at(h * mainsHz + side * (h * DRIFT_HZ + offset))),
      ),
    );
  }
}

/** A frequency's power in the quiet windows: what nearly all of them hold, as hum would, not a voice fragment in a few. */
const lowerQuartile = (ascending: number[]) => ascending[Math.floor(0.25 * (ascending.length - 1))];
const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

/** How well the quiet windows fit hum at `mainsHz`: the best fundamental on a grid, and how far each harmonic stands out there. */
function measureMains(spectrum: Spectrum, mainsHz: 50 | 60, limitHz: number): Candidate {
  const numbers: number[] = [];
  for (let h = 1; h <= HARMONICS && h * (mainsHz + DRIFT_HZ) + FLOOR_OFFSETS_HZ.at(-1)! < limitHz; h++) numbers.push(h);
  const floors = numbers.map((h) => spectrum.floor(h, mainsHz));
  // (The 1e-30: digital silence stands out by 0 dB.)
  const ratios = (fundamentalHz: number) =>
    numbers.map((h, i) => (spectrum.at(h * fundamentalHz) + 1e-30) / (floors[i] + 1e-30));
  // The fundamental where the harmonics' power above their floors adds up most: the strongest
  // harmonics place it, and a weak one that happens to sit on a voice's peak cannot pull it away.
  const steps = Math.round((2 * DRIFT_HZ) / GRID_HZ);
  const fundamentalAt = (step: number) => mainsHz - DRIFT_HZ + step * GRID_HZ;
  const fits = Array.from({ length: steps + 1 }, (_, step) =>
    ratios(fundamentalAt(step)).reduce((sum, r) => sum + r, 0),
  );
  const top = fits.indexOf(Math.max(...fits));
  const fundamentalHz = fundamentalAt(top);
  // A peak on the grid's edge lies outside mains' range: a tone, not hum.
  if (top === 0 || top === steps) return { mainsHz, fundamentalHz, harmonics: [], score: 0 };
  const harmonics = ratios(fundamentalHz).map((r, i) => ({ number: numbers[i], prominenceDb: 10 * Math.log10(r) }));
  // Evidence for this mains, in dB beyond the subtraction threshold: every harmonic that stands out counts.
  const score = harmonics.reduce((sum, h) => sum + Math.max(0, h.prominenceDb - SUBTRACT_DB), 0);
  return { mainsHz, fundamentalHz, harmonics, score };
}

/**
 * The hum's power (its subtracted harmonics' power above their floors in the quiet windows, as sine power)
 * against the voice's (the mean power of the louder half of the windows), in dB.
 */
function humUnderVoiceDb(
  quiet: Spectrum,
  candidate: Candidate,
  numbers: number[],
  ascending: AnalysisWindow[],
  windowFrames: number,
): number {
  // A Hann-windowed sine of amplitude a over n samples has |DFT|^2 = (a n / 4)^2, and power a^2 / 2.
  const n = ascending[0].samples.length;
  const hum = numbers.reduce((sum, h) => {
    const above = quiet.at(h * candidate.fundamentalHz) - quiet.floor(h, candidate.mainsHz);
    return sum + (8 * Math.max(0, above)) / (n * n);
  }, 0);
  const louder = ascending.slice(Math.floor(ascending.length / 2));
  const voice = mean(louder.map((w) => w.energy / windowFrames));
  return 10 * Math.log10((hum + 1e-30) / (voice + 1e-30));
}

/**
 * The fundamental to a few hundredths of a hertz: each subtracted harmonic's own peak divided by its
 * number, averaged with weights h^2 * (power above the floor), which is how much each one knows.
 */
function refineFundamental(spectrum: Spectrum, candidate: Candidate, numbers: number[]): number {
  let sum = 0;
  let weights = 0;
  for (const h of numbers) {
    const peakHz = peakNear(spectrum, h * candidate.fundamentalHz, (h * GRID_HZ) / 2 + REFINE_STEP_HZ);
    if (peakHz === null) continue;
    const weight = h * h * Math.max(0, spectrum.at(peakHz) / spectrum.floor(h, candidate.mainsHz) - 1);
    sum += (weight * peakHz) / h;
    weights += weight;
  }
  return weights > 0 ? sum / weights : candidate.fundamentalHz;
}

/** Where the spectrum peaks within +/-reach of a frequency, refined by a parabola on dB; null if it rises beyond. */
function peakNear(spectrum: Spectrum, frequencyHz: number, reach: number): number | null {
  const n = Math.ceil(reach / REFINE_STEP_HZ);
  const levels = Array.from(
    { length: 2 * n + 1 },
    (_, k) => 10 * Math.log10(spectrum.at(frequencyHz + (k - n) * REFINE_STEP_HZ) + 1e-30),
  );
  const top = levels.indexOf(Math.max(...levels));
  if (top === 0 || top === 2 * n) return null;
  const [before, peak, after] = [levels[top - 1], levels[top], levels[top + 1]];
  const curvature = before - 2 * peak + after;
  return frequencyHz + (top - n + (curvature < 0 ? (before - after) / (2 * curvature) : 0)) * REFINE_STEP_HZ;
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
