// The chart's time axis: ticks at a step a person counts in (5 s, 30 s, 15 min, ...), as many as the
// width has room for, labelled as a player shows a position (0:30, 1:00; 1:30:00 once the media runs
// an hour or more).

/** Steps in seconds, smallest first; the first one whose ticks fit is used. */
const STEPS_S = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

export interface TimeTick {
  seconds: number;
  label: string;
}

/** "1:05" (m:ss), or "1:01:05" (h:mm:ss) when `withHours`. */
export function positionLabel(seconds: number, withHours: boolean): string {
  const whole = Math.round(seconds);
  const ss = String(whole % 60).padStart(2, '0');
  if (!withHours) return `${Math.floor(whole / 60)}:${ss}`;
  const mm = String(Math.floor(whole / 60) % 60).padStart(2, '0');
  return `${Math.floor(whole / 3600)}:${mm}:${ss}`;
}

/** Ticks from 0 to the duration, at most `maxTicks` of them (at least two: the start and one more). */
export function timeTicks(durationS: number, maxTicks: number): TimeTick[] {
  const span = Math.max(durationS, 1);
  const room = Math.max(2, Math.floor(maxTicks));
  const step =
    STEPS_S.find((candidate) => Math.floor(span / candidate) + 1 <= room) ??
    Math.ceil(span / (room - 1) / 86400) * 86400;
  const withHours = span >= 3600;
  const ticks: TimeTick[] = [];
  for (let seconds = 0; seconds <= span + 1e-9; seconds += step)
    ticks.push({ seconds, label: positionLabel(seconds, withHours) });
  return ticks;
}

/** How many labels fit across `widthPx`: an h:mm:ss label needs more room than an m:ss one. */
export function timeTickRoom(durationS: number, widthPx: number): number {
  const labelPx = durationS >= 3600 ? 60 : 44;
  return Math.floor(widthPx / labelPx) + 1;
}
