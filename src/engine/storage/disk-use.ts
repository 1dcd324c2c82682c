// What the engine's media take on disk, as the editor's sidebar shows it: how many media are kept, how
// many of them are finished (what a removal may take), the bytes of every file in the media folder
// (uploads still arriving included), and when the oldest kept media arrived.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { MediaRecords } from './media-records';
import type { MediaStore } from './store';

export interface DiskUse {
  /** Media the engine holds, whatever their state. */
  media: number;
  /** Of those, the COMPLETED and FAILED ones. */
  finished: number;
  /** Bytes of every file under the media folder. */
  bytes: number;
  /** `inserted_at` of the oldest media kept, or null when none is. */
  oldest: string | null;
}

export async function diskUse(media: MediaRecords, store: MediaStore): Promise<DiskUse> {
  const records = await media.all();
  const oldest = records.reduce<string | null>(
    (first, record) =>
      first === null || Date.parse(record.inserted_at) < Date.parse(first) ? record.inserted_at : first,
    null,
  );
  return {
    media: records.length,
    finished: records.filter((record) => isFinished(record.enhancement_status)).length,
    bytes: await store.files.bytesUsed(),
    oldest,
  };
}

export function isFinished(state: string): boolean {
  return state === 'COMPLETED' || state === 'FAILED';
}

/** The sizes of the regular files under `folder`, however deep; a file that goes meanwhile counts nothing. */
export async function bytesUnder(folder: string): Promise<number> {
  const entries = await fsp.readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  const sizes = await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map((entry) =>
        fsp.lstat(join(entry.parentPath ?? entry.path, entry.name)).then(
          (stat) => stat.size,
          () => 0,
        ),
      ),
  );
  return sizes.reduce((sum, size) => sum + size, 0);
}
