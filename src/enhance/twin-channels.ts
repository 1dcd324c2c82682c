// Whether a stereo file's two channels are (nearly) the same signal, as a mono recording saved as
// stereo is: its noise reduction then runs once and the result goes to both channels, half the work.
import type { WavSource } from '../audio/wav-reader';

/** The channels count as twins when their difference is this far under their level (dB). */
export const TWIN_DIFFERENCE_DB = -60;

export async function twinChannels(source: WavSource): Promise<boolean> {
  if (source.layout.channels !== 2) return false;
  let difference = 0;
  let level = 0;
  for await (const block of source.blocks()) {
    const [left, right] = block.samples;
    for (let i = 0; i < block.frames; i++) {
      difference += (left[i] - right[i]) ** 2;
      level += (left[i] * left[i] + right[i] * right[i]) / 2;
    }
  }
  return level > 0 && 10 * Math.log10(difference / level + 1e-30) <= TWIN_DIFFERENCE_DB;
}
