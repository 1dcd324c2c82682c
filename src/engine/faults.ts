// Fault injection, for tests and benchmarks: a real server that misbehaves on purpose, observably.
import * as fs from 'node:fs';

/** How fast a dripping body goes when FaultOptions.dripBytesPerSecond is not given. */
export const DEFAULT_DRIP_BYTES_PER_SECOND = 16 * 1024;

export interface FaultOptions {
  /** Probability (0..1) that a request is answered 500. */
  error500Rate?: number;
  /** Probability that a request is answered 503. */
  error503Rate?: number;
  /** Probability that a response is cut off (connection reset) after half its body. */
  resetRate?: number;
  /** Probability that a response body drips out slowly. */
  dripRate?: number;
  /** Speed of a dripping body. Default 16 KiB/s. */
  dripBytesPerSecond?: number;
  /** The next N requests to a rate-limited operation are answered 429 whatever the count. */
  forced429?: number;
  /** Probability that processing ends FAILED. */
  failProcessingRate?: number;
  /** Probability that writing an upload to disk fails as a full disk does (ENOSPC), after its first bytes are written. */
  diskFullRate?: number;
  /** Source of randomness (for reproducible runs). Default Math.random. */
  random?: () => number;
}

export class Faults {
  private forced429Left: number;
  private readonly random: () => number;

  constructor(private readonly options: FaultOptions) {
    this.forced429Left = options.forced429 ?? 0;
    this.random = options.random ?? Math.random;
  }

  private roll(rate: number | undefined): boolean {
    return rate !== undefined && rate > 0 && this.random() < rate;
  }

  /** A status to answer instead of serving the request, if a fault says so. */
  errorStatus(): 500 | 503 | undefined {
    if (this.roll(this.options.error500Rate)) return 500;
    if (this.roll(this.options.error503Rate)) return 503;
    return undefined;
  }

  takeForced429(): boolean {
    if (this.forced429Left <= 0) return false;
    this.forced429Left--;
    return true;
  }

  resetResponse(): boolean {
    return this.roll(this.options.resetRate);
  }

  /** Bytes per second for a dripping response, or undefined for full speed. */
  dripSpeed(): number | undefined {
    return this.roll(this.options.dripRate)
      ? (this.options.dripBytesPerSecond ?? DEFAULT_DRIP_BYTES_PER_SECOND)
      : undefined;
  }

  failProcessing(): boolean {
    return this.roll(this.options.failProcessingRate);
  }

  /** The file system an upload is written through: undefined (the real one), or a full disk. */
  uploadFs(): UploadFs | undefined {
    return this.roll(this.options.diskFullRate) ? fullDisk() : undefined;
  }
}

/** What createWriteStream's `fs` option takes. */
export type UploadFs = Pick<typeof fs, 'open' | 'close' | 'write' | 'writev'>;

/** Room a full disk has left: less than an upload's first write, however large its buffer. */
const FULL_DISK_ROOM = 16 * 1024;

/**
 * The real file system with `room` bytes left: a write that would pass it fails with ENOSPC, as the kernel
 * answers on a full disk; the write stream, the upload's cleanup and the answer all run as they would.
 * Counted in bytes, not writes, so the fault does not depend on how the write stream batches its chunks.
 */
function fullDisk(room = FULL_DISK_ROOM): UploadFs {
  type Call = (...args: unknown[]) => void;
  let used = 0;
  const sizeOf = (data: unknown, length: unknown): number => {
    if (Array.isArray(data)) return (data as Buffer[]).reduce((sum, buffer) => sum + buffer.length, 0);
    if (typeof length === 'number') return length;
    return Buffer.isBuffer(data) ? data.length : Buffer.byteLength(String(data));
  };
  const failing =
    (real: Call) =>
    (...args: unknown[]) => {
      const size = sizeOf(args[1], args[3]);
      if (used + size <= room) {
        used += size;
        return real(...args);
      }
      const callback = args[args.length - 1] as (err: Error) => void;
      process.nextTick(
        callback,
        Object.assign(new Error('ENOSPC: no space left on device, write'), {
          errno: -28,
          code: 'ENOSPC',
          syscall: 'write',
        }),
      );
    };
  return {
    open: fs.open,
    close: fs.close,
    write: failing(fs.write as Call) as typeof fs.write,
    writev: failing(fs.writev as Call) as typeof fs.writev,
  };
}
