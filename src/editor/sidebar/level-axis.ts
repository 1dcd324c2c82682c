// The chart's level axis, in dB: LUFS (loudness) and dBTP (true peak) are both decibels relative to full
// scale, so one axis carries the curves, the target and the ceiling, and the distance between loudness
// and ceiling reads directly. It spans what is drawn, with a little room, at a round step.

/** Steps in dB, smallest first. */
const STEPS_DB = [1, 2, 3, 5, 6, 10, 12, 20];
/** Short-term loudness is reported down to -70 LUFS (null below): the axis never needs to go lower. */
const FLOOR_DB = -70;

export interface LevelAxis {
  min: number;
  max: number;
  ticks: number[];
}

export function levelAxis(levels: number[], maxTicks: number): LevelAxis {
  let lowest = Infinity;
  let highest = -Infinity;
  for (const level of levels)
    if (Number.isFinite(level)) {
      lowest = Math.min(lowest, level);
      highest = Math.max(highest, level);
    }
  if (lowest > highest) [lowest, highest] = [-40, 0]; // nothing to draw: a usual speech range
  const low = Math.max(FLOOR_DB, lowest - 2);
  const high = highest + 1;
  const room = Math.max(2, Math.floor(maxTicks));
  const step = STEPS_DB.find((candidate) => Math.ceil((high - low) / candidate) + 1 <= room) ?? 20;
  const min = Math.floor(low / step) * step;
  const max = Math.ceil(high / step) * step;
  const ticks: number[] = [];
  for (let level = min; level <= max; level += step) ticks.push(level);
  return { min, max, ticks };
}
