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
  };
}
