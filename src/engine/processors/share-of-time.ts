// ffmpeg tells how far it is as the time of the output written (`-progress`'s out_time_us, child-runs.ts):
// a stage that knows the audio's length turns it into its share done.

/** A reporter of ffmpeg's time written (seconds) as a share of `seconds` of audio; none when the length is unknown. */
export function shareOfTime(
  seconds: number | undefined,
  report: (share: number) => void,
): ((written: number) => void) | undefined {
  if (!seconds || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return (written) => report(Math.min(1, Math.max(0, written / seconds)));
}
