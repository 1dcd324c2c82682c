// BS.1770-4 channel weights: 1.0 for front channels, 1.41 (+1.5 dB) for surround channels, LFE excluded.

// WAVE_FORMAT_EXTENSIBLE speaker bits.
const LOW_FREQUENCY = 0x8;
const SURROUND = 0x10 | 0x20 | 0x100 | 0x200 | 0x400; // back left/right, back centre, side left/right

/** The usual layout for a channel count when the file gives no speaker mask (as most tools assume). */
const DEFAULT_MASKS: Record<number, number> = {
  1: 0x4, // mono (front centre)
  2: 0x3, // stereo
  3: 0x7, // L R C
  4: 0x33, // quad: L R, back L R
  5: 0x37, // 5.0: L R C, back L R
  6: 0x3f, // 5.1: L R C LFE, back L R
  7: 0x70f, // 6.1: L R C LFE, back C, side L R
  8: 0x63f, // 7.1: L R C LFE, back L R, side L R
};

const SURROUND_WEIGHT = 10 ** (1.5 / 10);

export function channelWeights(channels: number, channelMask: number): number[] {
  let mask = channelMask || DEFAULT_MASKS[channels] || 0;
  const weights: number[] = [];
  for (let bit = 1; weights.length < channels; bit <<= 1) {
    if (mask === 0 || bit > 0x40000) {
      weights.push(1); // speakers beyond the mask: counted as front channels
      continue;
    }
    if (!(mask & bit)) continue;
    mask &= ~bit;
    weights.push(bit === LOW_FREQUENCY ? 0 : bit & SURROUND ? SURROUND_WEIGHT : 1);
  }
  return weights;
}
