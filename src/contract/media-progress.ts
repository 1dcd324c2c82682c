// A processing media's progress: a local-engine extension field of the metadata
// (docs/interface.md#progress). Present only while the media is PROCESSING and the engine has measured work.

export interface MediaProgress {
  /** Share of the work done, 0 to 100 (whole percent). */
  percent: number;
  /** Estimated seconds left, from the pace of the work so far; null until enough work was measured. */
  seconds_left: number | null;
  /**
   * Why the work stands still, when it does: the disk is full or the storage does not answer; the job is
   * tried again until it can go on (seconds_left is then null).
   */
  waiting?: string;
  /**
   * Present when the job was taken over by another engine of a cluster (the one running it stopped, or
   * lost the shared state): the work started over there, so `percent` starts over too. Holds the percent
   * the first engine had told (null when it had told none).
   */
  taken_over?: { percent_before: number | null };
}

/** The progress field of a metadata object, when it holds a usable one. */
export function progressOf(metadata: Record<string, unknown>): MediaProgress | undefined {
  const progress = metadata.progress as Partial<MediaProgress> | undefined;
  if (typeof progress?.percent !== 'number' || !Number.isFinite(progress.percent)) return undefined;
  const left = progress.seconds_left;
  return {
    percent: Math.min(100, Math.max(0, progress.percent)),
    seconds_left: typeof left === 'number' && Number.isFinite(left) && left >= 0 ? left : null,
    ...(typeof progress.waiting === 'string' ? { waiting: progress.waiting } : {}),
    ...(takenOver(progress.taken_over) ? { taken_over: progress.taken_over } : {}),
  };
}

function takenOver(value: unknown): value is MediaProgress['taken_over'] {
  if (typeof value !== 'object' || value === null) return false;
  const before = (value as { percent_before?: unknown }).percent_before;
  return before === null || (typeof before === 'number' && Number.isFinite(before));
}
