// A path built from a name that is not the package's own (a node id from a flow, a media uid read back
// from disk) must stay inside the folder it was meant for. Every removal and every write under the
// journals' root and the engine's data folder goes through this check, so a name such as `..` can never
// reach the folder itself, its parent or anything beside it. Path arithmetic only: no I/O.
import { isAbsolute, relative, resolve, sep } from 'node:path';

/** `path` resolved, when it lies strictly inside `root` (never `root` itself); throws otherwise. */
export function insideRoot(root: string, path: string): string {
  const resolved = resolve(path);
  const rel = relative(resolve(root), resolved);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new Error(`refused: ${JSON.stringify(path)} is not inside ${JSON.stringify(root)}`);
  return resolved;
}
