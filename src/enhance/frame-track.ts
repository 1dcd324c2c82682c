// Per 10 ms frame of a file (the denoiser's frame grid), what the leveler and the report need: the
// voice probability (RNNoise's with FINCH; behind DeepFilterNet3, LARK and LARK_V2, read from the
// denoised energy, energy-voice.ts) and the energy after noise reduction, per frame; and, for the noise
// floor, a histogram of the frames' energy before noise reduction with the energy after it, so that
// figure costs constant memory. Channels are combined as they arrive: the voice is the likeliest of
// any channel, energies are summed.

/** The noise floor is the level of the quietest tenth of the frames (pauses, breaths, room tone). */
const NOISE_FLOOR_SHARE = 0.1;
/** Histogram bins: 0.1 dB from -200 dB up. */
const BIN_DB = 0.1;
const LOWEST_DB = -200;
const BINS = 2300;

export class FrameTrack {
  voice: Float32Array;
  /** Mean square of the enhanced signal, summed over channels; the leveler's plan turns it into its gains. */
  energy: Float32Array;
  frames = 0;
  /** Per channel and frame, by energy before noise reduction: frames, energy before, energy after. */
  private floor: FloorHistogram;

  /** `capacity`: the frames expected (the file's length), so the arrays are made once at their size. */
  constructor(capacity = 1024) {
    this.voice = new Float32Array(capacity);
    this.energy = new Float32Array(capacity);
    this.floor = { count: new Float64Array(BINS), before: new Float64Array(BINS), after: new Float64Array(BINS) };
  }

  /** A track made of another's arrays, taken over as they are (no copy: a long file's track is megabytes). */
  static adopt(serialized: SerializedTrack): FrameTrack {
    const track = new FrameTrack(0);
    Object.assign(track, {
      voice: serialized.voice,
      energy: serialized.energy,
      frames: serialized.frames,
      floor: serialized.floor,
    });
    return track;
  }

  add(frame: number, voice: number, energyBefore: number, energyAfter: number): void {
    if (frame >= this.voice.length) this.grow(frame + 1);
    this.frames = Math.max(this.frames, frame + 1);
    this.voice[frame] = Math.max(this.voice[frame], voice);
    // Rounded as a track from another thread arrives, so one thread or several give the same sums.
    this.energy[frame] += Math.fround(energyAfter);
    const bin = Math.max(
      0,
      Math.min(BINS - 1, Math.floor((10 * Math.log10(energyBefore + 1e-30) - LOWEST_DB) / BIN_DB)),
    );
    this.floor.count[bin]++;
    this.floor.before[bin] += energyBefore;
    this.floor.after[bin] += energyAfter;
  }

  /** How much lower the noise floor is after noise reduction (dB); null for a silent file. */
  noiseFloorReductionDb(): number | null {
    const { count, before, after } = this.floor;
    const total = count.reduce((sum, n) => sum + n, 0);
    let frames = 0;
    let energyBefore = 0;
    let energyAfter = 0;
    for (let bin = 0; bin < BINS && frames < total * NOISE_FLOOR_SHARE; bin++) {
      frames += count[bin];
      energyBefore += before[bin];
      energyAfter += after[bin];
    }
    return energyBefore > 0 && energyAfter > 0 ? 10 * Math.log10(energyBefore / energyAfter) : null;
  }

  /** Takes in the track of other channels of the same file. */
  merge(other: SerializedTrack): void {
    if (other.frames > this.voice.length) this.grow(other.frames);
    this.frames = Math.max(this.frames, other.frames);
    for (let k = 0; k < other.frames; k++) {
      this.voice[k] = Math.max(this.voice[k], other.voice[k]);
      this.energy[k] += other.energy[k];
    }
    for (let bin = 0; bin < BINS; bin++) {
      this.floor.count[bin] += other.floor.count[bin];
      this.floor.before[bin] += other.floor.before[bin];
      this.floor.after[bin] += other.floor.after[bin];
    }
  }

  /** What crosses a thread boundary (postMessage copies the arrays). */
  serialize(): SerializedTrack {
    return {
      frames: this.frames,
      voice: this.voice.subarray(0, this.frames),
      energy: this.energy.subarray(0, this.frames),
      floor: this.floor,
    };
  }

  private grow(least: number): void {
    const size = Math.max(least, this.voice.length * 2);
    const larger = (array: Float32Array) => {
      const copy = new Float32Array(size);
      copy.set(array);
      return copy;
    };
    this.voice = larger(this.voice);
    this.energy = larger(this.energy);
  }
}

interface FloorHistogram {
  count: Float64Array;
  before: Float64Array;
  after: Float64Array;
}

export interface SerializedTrack {
  frames: number;
  voice: Float32Array;
  energy: Float32Array;
  floor: FloorHistogram;
}
