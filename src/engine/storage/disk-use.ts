// What the engine's media take on disk, as the editor's sidebar shows it: how many media are kept, how
// many of them are finished (what a removal may take), the bytes of every file in the media folder
// (uploads still arriving included), and when the oldest kept media arrived.
import type { MediaFiles } from './media-files';
import type { MediaRecords } from './media-records';

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

export async function diskUse(media: MediaRecords, files: MediaFiles): Promise<DiskUse> {
  const records = await media.all();
  const oldest = records.reduce<string | null>(
    (first, record) =>
      first === null || Date.parse(record.inserted_at) < Date.parse(first) ? record.inserted_at : first,
    null,
  );
  return {
    media: records.length,
    finished: records.filter((record) => isFinished(record.enhancement_status)).length,
    bytes: await files.bytesUsed(),
    oldest,
  };
}

export function isFinished(state: string): boolean {
  return state === 'COMPLETED' || state === 'FAILED';
}
