// One pass over a file before DeepFilterNet3 runs on it:
//   - whether a stereo file's two channels are (nearly) the same signal, as a mono recording saved as
//     stereo is: noise reduction then runs once and the result goes to both channels, half the work;
//   - how loud its speech is. DeepFilterNet3 judges level as well as sound: it removes quiet speech as
//     noise (measured: a voice at -53 dBFS RMS kept, at -73 dBFS gone; a synthetic voice kept at -28,
//     gone at -48). A quiet file is therefore raised before the network and lowered after by the same
//     gain, which changes nothing else.
import type { WavSource } from '../audio/wav-reader';

/** The channels count as twins when their difference is this far under their level (dB). */
export const TWIN_DIFFERENCE_DB = -60;
/** The speech level DeepFilterNet3 is given at least (dBFS RMS of the louder frames). */
export const DFN_SPEECH_LEVEL_DB = -26;
/** The most a quiet file is raised for the network. */
export const MAX_PRE_GAIN_DB = 40;
/** The speech level is the level of the frames at this share from the quietest (the louder fifth). */
const SPEECH_PERCENTILE = 0.8;
const LOWEST_DB = -140;
const BIN_DB = 0.5;
const BINS = 280;

export interface ChannelSurvey {
  twins: boolean;
  /** dBFS RMS of the louder 10 ms frames of all channels; null for silence. */
  speechLevelDb: number | null;
}

export async function surveyChannels(source: WavSource): Promise<ChannelSurvey> {
  const { channels, sampleRate } = source.layout;
  const frame = Math.round(sampleRate / 100);
  const histogram = new Float64Array(BINS);
  let difference = 0;
  let level = 0;
  const energy = new Float64Array(channels);
  let filled = 0;
  for await (const block of source.blocks()) {
    for (let i = 0; i < block.frames; i++) {
      for (let c = 0; c < channels; c++) energy[c] += block.samples[c][i] ** 2;
      if (channels === 2) {
        const [left, right] = block.samples;
        difference += (left[i] - right[i]) ** 2;
        level += (left[i] * left[i] + right[i] * right[i]) / 2;
      }
      if (++filled < frame) continue;
      for (let c = 0; c < channels; c++) {
        const db = 10 * Math.log10(energy[c] / frame + 1e-30);
        histogram[Math.max(0, Math.min(BINS - 1, Math.floor((db - LOWEST_DB) / BIN_DB)))]++;
        energy[c] = 0;
      }
      filled = 0;
    }
  }
  const twins = channels === 2 && level > 0 && 10 * Math.log10(difference / level + 1e-30) <= TWIN_DIFFERENCE_DB;
  const total = histogram.reduce((sum, n) => sum + n, 0);
  let speechLevelDb: number | null = null;
  for (let bin = 0, seen = 0; bin < BINS && total > 0; bin++) {
    seen += histogram[bin];
    if (seen >= total * SPEECH_PERCENTILE) {
      speechLevelDb = bin === 0 ? null : LOWEST_DB + (bin + 0.5) * BIN_DB;
      break;
    }
  }
  return { twins, speechLevelDb };
}

/** The gain (dB) a file with this speech level is raised by for DeepFilterNet3, and lowered by after. */
export function preGainDb(speechLevelDb: number | null): number {
  if (speechLevelDb === null) return 0;
  return Math.max(0, Math.min(MAX_PRE_GAIN_DB, DFN_SPEECH_LEVEL_DB - speechLevelDb));
}
