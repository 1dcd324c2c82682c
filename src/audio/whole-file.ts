// The last check on a file the engine made before it is delivered: it holds every byte it says it
// holds. A file cut short by a full disk (or anything else that lost the end of a write) would otherwise
// be served as finished: players and ffprobe call it a premature end of file, the user finds out later.
import { open, stat } from 'node:fs/promises';
import { diskFull } from './write-fully';

/**
 * Throws (ENOSPC) when the WAV at `path` is shorter than its RIFF or RF64 header declares. A file that is
 * not a WAV the engine wrote (no RIFF/RF64 header) is left to other checks.
 */
export async function checkWavWhole(path: string): Promise<void> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const head = Buffer.alloc(28);
    const { bytesRead } = await file.read(head, 0, 28, 0);
    const form = head.toString('latin1', 0, 4);
    let declared: number | undefined;
    if (form === 'RIFF' && bytesRead >= 8) declared = head.readUInt32LE(4) + 8;
    else if (form === 'RF64' && bytesRead >= 28 && head.toString('latin1', 12, 16) === 'ds64')
      declared = Number(head.readBigUInt64LE(20)) + 8;
    if (declared !== undefined && size < declared)
      throw diskFull(`the output holds ${size} bytes where its header declares ${declared}; it was not written whole`);
  } finally {
    await file.close();
  }
}

/** Throws (ENOSPC) when `copy` is not as long as `original`: a copy cut short. */
export async function checkCopyWhole(original: string, copy: string): Promise<void> {
  const [from, to] = await Promise.all([stat(original), stat(copy)]);
  if (to.size !== from.size)
    throw diskFull(
      `the output holds ${to.size} bytes where the file it copies holds ${from.size}; it was not copied whole`,
    );
}
