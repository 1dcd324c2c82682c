// Node and config ids name folders: a journal per node (<userDir>/media-enhance/<config>/kept/<node>) and
// an engine store per config node (media-enhance-data/<config>). An id is whatever string a flow holds
// (hand-made or imported), so it is encoded into exactly one path segment, one-to-one:
//   - lower-case letters, digits, `_`, `-` and `.` stay as they are, so the ids Node-RED makes
//     (`a1b2c3d4e5f6a7b8`, `d3f1a2b4.5c6e7`) name their folders as before;
//   - every other character, upper-case letters included (a case-insensitive disk must not merge `A`
//     and `a`), becomes `%` and two upper-case hex digits per UTF-8 byte, `%` itself too;
//   - an id of dots only (`.`, `..`) has its dots escaped as well: it never names the folder or its parent;
//   - an empty id, or one whose encoding passes 128 characters, becomes the start of its encoding, `~` and
//     the SHA-256 of the id: `~` appears in no other encoding, so no two ids share a folder.
import { createHash } from 'node:crypto';
import { lstatSync, renameSync, type Stats } from 'node:fs';
import { join } from 'node:path';

const MAX_PLAIN = 128;

export function idSegment(id: string): string {
  const dotsOnly = /^\.+$/.test(id);
  const escaped = Array.from(Buffer.from(id, 'utf8'))
    .map((byte) => {
      const char = String.fromCharCode(byte);
      const plain = /[a-z0-9_-]/.test(char) || (char === '.' && !dotsOnly);
      return plain ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
  if (escaped !== '' && escaped.length <= MAX_PLAIN) return escaped;
  const start = escaped.slice(0, 60).replace(/%[0-9A-F]?$/, '');
  return `${start}~${createHash('sha256').update(id, 'utf8').digest('hex')}`;
}

/** The name earlier versions gave the folder of an id: not one-to-one (`a:b` and `a_b` shared `a_b`). */
export function legacySegment(id: string): string {
  return id.replace(/[^\w.-]/g, '_');
}

/**
 * Moves the folder an earlier version made for `id` (under its legacy name) to the id's own name, so an
 * upgrade keeps what it holds. Nothing moves when the names agree, when the legacy name is unsafe (empty,
 * dots only, too long), when the new folder exists already, when the legacy folder is not a folder (a
 * link stays where it is), or when `claimed` says a deployed id names that folder itself today (ids
 * such as `a:b` and `a_b` shared it: it stays with `a_b`). Synchronous: it runs while the node is
 * built, before the deleted-node sweep that follows the deploy looks at the folders.
 */
export function adoptLegacyFolder(parent: string, id: string, claimed: (segment: string) => boolean): void {
  const current = idSegment(id);
  const legacy = legacySegment(id);
  if (legacy === current || legacy === '' || /^\.+$/.test(legacy) || legacy.length > 255 || claimed(legacy)) return;
  const from = join(parent, legacy);
  const to = join(parent, current);
  // The new folder exists: it wins, and the old one is left for a person to look at.
  if (!statOf(from)?.isDirectory() || statOf(to) !== undefined) return;
  try {
    renameSync(from, to);
  } catch {
    // gone meanwhile, or the disk refuses: the node starts with an empty folder
  }
}

function statOf(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
