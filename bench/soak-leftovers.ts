// What a run must not leave behind: partial downloads and temporary files, and the API key anywhere
// outside Node-RED's encrypted credentials.
import { promises as fsp } from 'node:fs';
import { join, relative } from 'node:path';

/** `.part` (the client's temporary download) and `.tmp` files, anywhere under `roots` except installed packages. */
export async function findTempFiles(roots: string[]): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, root: string): Promise<void> => {
    for (const entry of await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') await walk(path, root);
      } else if (/\.(part|tmp)$/i.test(entry.name)) {
        found.push(join(root.split('/').pop() ?? '', relative(root, path)));
      }
    }
  };
  for (const root of roots) await walk(root, root);
  return found;
}

/** The files (by the names given) whose text contains `secret`. */
export async function filesContaining(files: Record<string, string>, secret: string): Promise<string[]> {
  const hits: string[] = [];
  for (const [name, path] of Object.entries(files)) {
    const text = await fsp.readFile(path, 'utf8').catch(() => '');
    if (text.includes(secret)) hits.push(name);
  }
  return hits;
}

/** File names directly in `dir`. */
export async function namesIn(dir: string): Promise<Set<string>> {
  return new Set(await fsp.readdir(dir).catch(() => [] as string[]));
}
