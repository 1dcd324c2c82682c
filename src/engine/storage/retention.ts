// How long the engine keeps finished media: the oldest go first, once older than the age limit or
// while all finished media together take more than the size limit. A media still pending or
// processing is never removed, nor one finished or asked for (status or file) within the grace
// period: a wait that is still following it, and the download after it, always find it.
import { StateLog } from '../state-log';
import { isFinished } from './disk-use';
import type { MediaRecords } from './media-records';
import type { MediaFiles } from './media-files';
import type { MediaRecord } from './media-record';

export interface RetentionOptions {
  /** Finished media older than this go. `null`: kept whatever their age. */
  maxAgeMs: number | null;
  /** The oldest finished media go while all finished media take more than this. `null`: no size limit. */
  maxTotalBytes: number | null;
  /** A media finished or asked for this recently stays, whatever the limits say. */
  graceMs: number;
  /** How often the limits are checked besides after each finished job. */
  sweepIntervalMs: number;
}

export const DEFAULT_RETENTION: RetentionOptions = {
  maxAgeMs: 7 * 24 * 3600_000,
  maxTotalBytes: 5 * 1024 ** 3,
  graceMs: 3600_000,
  sweepIntervalMs: 10 * 60_000,
};

/** What instances sharing their media share of the retention (cluster/cluster.ts). */
export interface SharedRetention {
  /** Whether this instance sweeps now: one at a time; false while the shared state is away. */
  mayRemove(): Promise<boolean>;
  /** A status or file request for the media, on this instance, at `at`. */
  noteUse(uid: string, at: number): void;
  /** The last request for each media on any instance (ms since the epoch). */
  uses(): Promise<Map<string, number>>;
  /** Gives the turn back, if this instance has it: it stops. */
  release(): Promise<void>;
}

export interface RemovedMedia {
  record: MediaRecord;
  reason: string;
}

export class MediaRetention {
  /** Last status or file request per media, since this start (a restart falls back to `updated_at`). */
  private readonly lastAsked = new Map<string, number>();
  /** Bytes of a finished media's files: they no longer change. */
  private readonly sizes = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private readonly sweepLog: StateLog;
  private sweeping = Promise.resolve<RemovedMedia[]>([]);

  constructor(
    private readonly records: MediaRecords,
    /** The media's files. */
    private readonly files: MediaFiles,
    private readonly options: RetentionOptions,
    private readonly onRemoved: (removed: RemovedMedia) => void = () => undefined,
    private readonly now: () => number = Date.now,
    /** With instances sharing the media: whose turn it is, and the requests each instance answered. */
    private readonly shared?: SharedRetention,
    /** The engine's error log: a sweep that failed, a media that could not be removed. */
    private readonly logError: (line: string) => void = () => undefined,
  ) {
    this.sweepLog = new StateLog(logError, 'retention');
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(true), this.options.sweepIntervalMs);
    this.timer.unref();
    void this.sweep(true);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
    await this.shared?.release();
  }

  /** A status or file request for the media: it is being followed. */
  asked(uid: string): void {
    const now = this.now();
    this.lastAsked.set(uid, now);
    this.shared?.noteUse(uid, now);
  }

  /**
   * Applies the limits once; sweeps run one after another. `withLeftovers` (the periodic sweeps, not
   * those after each job): the storage's leftovers of a crash go too.
   */
  sweep(withLeftovers = false): Promise<RemovedMedia[]> {
    this.sweeping = this.sweeping
      .then(() => this.removeWhatIsDue(withLeftovers))
      .then(
        (removed) => {
          this.sweepLog.ok();
          return removed;
        },
        (err: Error) => {
          // The next sweep tries again; what stopped this one is for a person to see, once while it lasts.
          this.sweepLog.failed(`the sweep stopped: ${err?.message ?? String(err)}`);
          return [];
        },
      );
    return this.sweeping;
  }

  /**
   * Removes every finished media now, whatever the limits and the grace period say, except those in
   * `keep` (media a flow is still about to download); in turn with the sweeps.
   */
  removeFinished(keep: ReadonlySet<string> = new Set()): Promise<{ removed: number; bytes: number }> {
    const removal = this.sweeping.then(async () => {
      let removed = 0;
      let bytes = 0;
      for (const record of await this.records.all()) {
        if (!isFinished(record.enhancement_status) || keep.has(record.uid)) continue;
        // Everything kept for it (loudness report too): what the storage gets back.
        const size = await this.files.allBytes(record.uid);
        const gone = await this.records.remove(record.uid);
        this.sizes.delete(record.uid);
        this.lastAsked.delete(record.uid);
        if (!gone) continue; // another instance removed it meanwhile
        removed++;
        bytes += size;
        this.onRemoved({ record, reason: 'removed from the editor' });
      }
      return { removed, bytes };
    });
    this.sweeping = removal.then(
      () => [],
      () => [],
    );
    return removal;
  }

  private async removeWhatIsDue(withLeftovers: boolean): Promise<RemovedMedia[]> {
    if (this.shared && !(await this.shared.mayRemove())) return [];
    const { maxAgeMs, maxTotalBytes, graceMs } = this.options;
    const now = this.now();
    if (withLeftovers) await this.removeLeftovers(now);
    const all = await this.records.all();
    const finished = all.filter((record) => isFinished(record.enhancement_status));
    const usedElsewhere = (await this.shared?.uses()) ?? new Map<string, number>();
    const lastUse = (record: MediaRecord) =>
      Math.max(Date.parse(record.updated_at), this.lastAsked.get(record.uid) ?? 0, usedElsewhere.get(record.uid) ?? 0);
    finished.sort((a, b) => lastUse(a) - lastUse(b)); // oldest first
    let total = 0;
    for (const record of finished) total += await this.sizeOf(record.uid);
    // Media in progress count too, their work files with them (a decoded input may be gigabytes): the
    // limit is on what the media folder takes, and only finished media can make room.
    for (const record of all)
      if (!isFinished(record.enhancement_status)) total += await this.files.allBytes(record.uid);
    const removed: RemovedMedia[] = [];
    for (const record of finished) {
      const idle = now - lastUse(record);
      if (idle < graceMs) break; // sorted: every later one is more recent still
      const tooOld = maxAgeMs !== null && idle > maxAgeMs;
      const overSize = maxTotalBytes !== null && total > maxTotalBytes;
      if (!tooOld && !overSize) break;
      const bytes = await this.sizeOf(record.uid);
      let gone: boolean;
      try {
        gone = await this.records.remove(record.uid);
      } catch (err) {
        // One media that cannot be removed (its files, its path) never stops the removal of the others.
        this.logError(`retention: media ${record.uid} could not be removed: ${(err as Error)?.message ?? String(err)}`);
        continue;
      }
      this.sizes.delete(record.uid);
      this.lastAsked.delete(record.uid);
      total -= bytes;
      if (!gone) continue; // another instance removed it meanwhile: it tells of it
      const reason = tooOld
        ? `finished or last asked for ${spoken(idle)} ago, more than the ${spoken(maxAgeMs)} kept`
        : `media took ${mebibytes(total + bytes)} (work files included), more than the ${mebibytes(maxTotalBytes!)} kept; this was the oldest finished`;
      removed.push({ record, reason });
      this.onRemoved({ record, reason });
    }
    return removed;
  }

  /** What a crash left in the storage that no media owns (S3: unfinished uploads, unowned objects). */
  private async removeLeftovers(now: number): Promise<void> {
    // A media whose record cannot be read now (damaged, the shared state away) counts as owned: kept.
    const owned = (uid: string) =>
      this.records.get(uid).then(
        (record) => record !== undefined,
        () => true,
      );
    const removed = (await this.files.sweepLeftovers?.(owned, now)) ?? [];
    for (const what of removed) this.logError(`retention: removed a crash's leftover: ${what}`);
  }

  private async sizeOf(uid: string): Promise<number> {
    let bytes = this.sizes.get(uid);
    if (bytes === undefined) {
      bytes = await this.files.fileBytes(uid);
      this.sizes.set(uid, bytes);
    }
    return bytes;
  }
}

const mebibytes = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

/** 40 s, 12 min, 5 h, 7 days. */
function spoken(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'days'],
    [3_600_000, 'h'],
    [60_000, 'min'],
  ];
  for (const [size, name] of units) if (ms >= 2 * size) return `${Math.round(ms / size)} ${name}`;
  return `${Math.max(1, Math.round(ms / 1000))} s`;
}
