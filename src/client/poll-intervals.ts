// When to ask for a media's status again. The interface asks for 3-5 s at first and 5-10 s for long jobs;
// each interval is drawn at random within its range so many waits do not poll in lockstep.

export interface PollIntervals {
  /** Range of the first intervals, in ms. */
  initialMs: [number, number];
  /** Range once a wait has lasted `longAfterMs`. */
  longMs: [number, number];
  longAfterMs: number;
}

export const DEFAULT_POLL_INTERVALS: PollIntervals = {
  initialMs: [3_000, 5_000],
  longMs: [5_000, 10_000],
  longAfterMs: 60_000,
};

export function nextPollDelay(intervals: PollIntervals, waitedMs: number, random: () => number): number {
  const [min, max] = waitedMs < intervals.longAfterMs ? intervals.initialMs : intervals.longMs;
  return Math.round(min + random() * (max - min));
}
