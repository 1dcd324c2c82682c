// The speech leveler: a slow gain rider that brings quiet and loud passages (two speakers at different
// distances from the microphone) toward one level. It works on the frame track the denoiser made:
// the level is measured over the voiced frames only, the gain is decided at voiced frames, and in
// pauses it is held at no more than unity and no more than the speech on either side, so a pause's
// noise is never pumped up. The gain curve is smoothed in both directions (no lag, no steps) and
// interpolated per sample.
import type { Planar } from '../audio/pcm-codec';
import type { FrameTrack } from './frame-track';

/** Frames per second of the track (RNNoise's 10 ms frames). */
export const TRACK_RATE = 100;
/** A frame is speech from this voice probability on. */
const SPEECH_VOICE = 0.5;
/** The level is measured over this many frames either side (0.75 s). */
const WINDOW = 75;
/** Fewer voiced frames than this in the window (0.25 s of speech) is too little to measure a level. */
const MIN_VOICED = 25;
/** The largest boost and cut. */
export const MAX_GAIN_DB = 12;
/** Time constant of the gain's smoothing, applied forwards and backwards. */
const SMOOTHING_SECONDS = 0.25;

export interface LevelerPlan extends LevelerFigures {
  /** Gain per frame, linear. */
  gains: Float32Array;
}

export interface LevelerFigures {
  /** The speech level all passages are brought toward (dB of mean square, relative). */
  targetDb: number | null;
  /** Lowest and highest gain used on speech (dB). */
  minGainDb: number;
  maxGainDb: number;
  /** Share of the frames that are speech. */
  speechShare: number;
}

/** Takes the track's energy over: it becomes the gains (read the energy before, never after). */
export function planLeveler(track: FrameTrack): LevelerPlan {
  const frames = track.frames;
  // One array, turned in place from energies into levels, then gains (dB, then linear): a long file's
  // track is megabytes, 4 bytes per 10 ms frame and per array (1.4 MB an hour).
  const values = windowedSpeechLevels(track);
  const measured = new Uint8Array(frames);
  let sum = 0;
  let count = 0;
  for (let k = 0; k < frames; k++) {
    if (!Number.isNaN(values[k])) {
      measured[k] = 1;
      sum += values[k];
      count++;
    }
  }
  if (count === 0) return { gains: values.fill(1), targetDb: null, minGainDb: 0, maxGainDb: 0, speechShare: 0 };
  const targetDb = sum / count;
  // Voiced frames get the gain that brings their level to the target; pauses hold, never above unity.
  let held = 0;
  for (let k = 0; k < frames; k++) {
    if (measured[k]) values[k] = held = clamp(targetDb - values[k], -MAX_GAIN_DB, MAX_GAIN_DB);
    else values[k] = Math.min(0, held);
  }
  held = 0;
  for (let k = frames - 1; k >= 0; k--) {
    if (measured[k]) held = values[k];
    else values[k] = Math.min(values[k], held);
  }
  smoothBothWays(values, Math.exp(-1 / (SMOOTHING_SECONDS * TRACK_RATE)));
  let minGainDb = Infinity;
  let maxGainDb = -Infinity;
  for (let k = 0; k < frames; k++) {
    if (measured[k]) {
      minGainDb = Math.min(minGainDb, values[k]);
      maxGainDb = Math.max(maxGainDb, values[k]);
    }
    values[k] = 10 ** (values[k] / 20);
  }
  return { gains: values, targetDb, minGainDb, maxGainDb, speechShare: count / frames };
}

/**
 * The speech level around each voiced frame: mean energy of the voiced frames within ±WINDOW, in dB;
 * NaN where the frame is not speech or too little speech is near to measure. Written over the track's
 * energy: a frame's level is held back until the window has left that frame, whose energy it no longer reads.
 */
function windowedSpeechLevels(track: FrameTrack): Float32Array {
  const { frames, voice, energy } = track;
  const voiced = (k: number) => voice[k] >= SPEECH_VOICE && energy[k] > 0;
  // The levels of the frames the window still covers behind it, by frame modulo its size.
  const behind = new Float32Array(WINDOW + 1);
  let sum = 0;
  let count = 0;
  for (let k = 0; k < Math.min(WINDOW, frames); k++) {
    if (voiced(k)) {
      sum += energy[k];
      count++;
    }
  }
  for (let k = 0; k < frames; k++) {
    const entering = k + WINDOW;
    const leaving = k - WINDOW - 1;
    if (entering < frames && voiced(entering)) {
      sum += energy[entering];
      count++;
    }
    if (leaving >= 0) {
      if (voiced(leaving)) {
        sum -= energy[leaving];
        count--;
      }
      energy[leaving] = behind[leaving % behind.length];
    }
    behind[k % behind.length] = voiced(k) && count >= MIN_VOICED ? 10 * Math.log10(Math.max(sum, 1e-20) / count) : NaN;
  }
  for (let k = Math.max(0, frames - behind.length); k < frames; k++) energy[k] = behind[k % behind.length];
  return energy.subarray(0, frames);
}

/** A one-pole low-pass run forwards then backwards: zero phase, so the gain moves before a change as much as after it. */
function smoothBothWays(values: Float32Array, pole: number): void {
  let state = values[0] ?? 0;
  for (let k = 0; k < values.length; k++) values[k] = state = pole * state + (1 - pole) * values[k];
  state = values[values.length - 1] ?? 0;
  for (let k = values.length - 1; k >= 0; k--) values[k] = state = pole * state + (1 - pole) * values[k];
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

/** Applies a plan's gains to audio at the file's own rate, block after block. */
export class LevelerGain {
  private position = 0;

  constructor(
    private readonly plan: LevelerPlan,
    private readonly sampleRate: number,
  ) {}

  apply(samples: Planar, frames: number): void {
    const { gains } = this.plan;
    const last = gains.length - 1;
    const step = TRACK_RATE / this.sampleRate;
    for (let i = 0; i < frames; i++) {
      // Frame k's gain sits at its centre; between two centres it is interpolated.
      const at = (this.position + i) * step - 0.5;
      const k = Math.max(0, Math.min(last, Math.floor(at)));
      const next = Math.min(last, k + 1);
      const fraction = Math.max(0, Math.min(1, at - k));
      const gain = gains[k] + (gains[next] - gains[k]) * fraction;
      for (const channel of samples) channel[i] *= gain;
    }
    this.position += frames;
  }
}
