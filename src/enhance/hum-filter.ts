// The notches that take a found hum out. A single second-order notch cannot be both 30 dB deep over
// the fundamental's uncertainty and flat a couple of hertz away (its depth at an offset d is about
// 2d/bandwidth), so each harmonic gets a pair of notches placed either side of the estimate: their
// zeros cover the uncertain band, and each stays narrow enough to leave the voice around it alone.
import { FilterCascade, notch, type Biquad } from './biquad';
import type { HumReport } from './hum-detector';

/** Each section's -3 dB bandwidth per hertz of half-width held down: ~32 dB at the band's worst point. */
const BANDWIDTH_PER_HALF_WIDTH = 9;

/**
 * Half the band a harmonic's notch holds at least 30 dB down: the estimate's error (0.2 Hz), or, for
 * high harmonics, the fundamental drifting by 0.04 Hz (a drift multiplied by the harmonic's number).
 */
export function stopHalfWidthHz(frequencyHz: number): number {
  return Math.max(0.2, frequencyHz * 0.0008);
}

/** The two sections that notch out a hum harmonic at `frequencyHz`; none if it would reach Nyquist. */
export function harmonicNotch(sampleRate: number, frequencyHz: number): Biquad[] {
  const halfWidth = stopHalfWidthHz(frequencyHz);
  // Zeros at +/- halfWidth/sqrt(2) make the stop band's worst points (centre and edges) equally deep.
  const offset = halfWidth / Math.SQRT2;
  const bandwidth = halfWidth * BANDWIDTH_PER_HALF_WIDTH;
  if (frequencyHz + offset + bandwidth >= sampleRate / 2) return [];
  return [notch(sampleRate, frequencyHz - offset, bandwidth), notch(sampleRate, frequencyHz + offset, bandwidth)];
}

/** One channel's hum notches: one pair per harmonic the detector reported. */
export function humNotches(sampleRate: number, hum: HumReport): FilterCascade {
  return new FilterCascade(hum.harmonicsHz.flatMap((frequency) => harmonicNotch(sampleRate, frequency)));
}
