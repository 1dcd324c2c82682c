// Positioned writes that finish or fail. A write to a nearly full disk may store only part of what it was
// given and still succeed (the kernel's short write): the caller must write the rest, which then fails
// with ENOSPC. Ignoring the count leaves a file shorter than its header says, with no error anywhere.
import type { FileHandle } from 'node:fs/promises';

/** Writes `length` bytes of `data` from `offset` at `position`, all of them, or throws (ENOSPC on a full disk). */
export async function writeFully(
  file: FileHandle,
  data: Uint8Array,
  offset: number,
  length: number,
  position: number,
): Promise<void> {
  for (let done = 0; done < length;) {
    const { bytesWritten } = await file.write(data, offset + done, length - done, position + done);
    // A write that stores nothing and reports no error would loop for ever: it is a full disk by another name.
    if (bytesWritten <= 0) throw diskFull(`a write stored ${done} of ${length} bytes`);
    done += bytesWritten;
  }
}

/** An error a caller tells from others as a full disk (code ENOSPC), as the kernel's own is told. */
export function diskFull(detail: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`no space left on device: ${detail}`), { code: 'ENOSPC', errno: -28 });
}

/** The disk (or the account's quota) is full: nothing the caller did wrong; a later try may succeed. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}
