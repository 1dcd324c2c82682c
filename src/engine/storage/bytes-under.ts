// The bytes a folder's files take, for the storage's disk use and the retention's size limit.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';

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
