// The hidden work folders of intro and outro joins (`.<episode>.episode-XXXXXX` beside the episode): made
// and released by a join, swept at enhance file's start. Each holds an `owner` note (host and process), so
// the sweep leaves a join that another live Node-RED on this machine (or another machine sharing the
// folder) is running, and removes what a crash left: a folder of a process that is gone, or of none.
import { hostname } from 'node:os';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { bytesUnder } from '../engine/storage/bytes-under';

/** A join's work folder beside its episode: `.<episode file name>.episode-` and mkdtemp's six characters. */
const JOIN_FOLDER = /^\..+\.episode-[A-Za-z0-9]{6}$/;
const OWNER_FILE = 'owner';
/** A folder of another host (or a pid now someone else's) untouched this long is a crash's: a join writes on. */
const ABANDONED_AFTER_MS = 6 * 60 * 60 * 1000;

/**
 * The work folders of the joins running in this process, and the names of those being made (a folder is on
 * disk before mkdtemp's answer says which): the sweep leaves them.
 */
const joinsUnderWay = new Set<string>();
const joinsStarting = new Set<string>();

interface Owner {
  host: string;
  pid: number;
}

/** A new work folder for joining `episodePath`, beside it (the joined file is renamed into place). */
export async function makeJoinFolder(episodePath: string): Promise<string> {
  const prefix = join(dirname(episodePath), `.${basename(episodePath)}.episode-`);
  joinsStarting.add(prefix);
  try {
    const folder = await mkdtemp(prefix);
    joinsUnderWay.add(folder);
    const owner: Owner = { host: hostname(), pid: process.pid };
    await writeFile(join(folder, OWNER_FILE), JSON.stringify(owner)).catch(async (err: unknown) => {
      await removeJoinFolder(folder);
      throw err;
    });
    return folder;
  } finally {
    joinsStarting.delete(prefix);
  }
}

/** Removes a join's work folder (its work is done or given up). */
export async function removeJoinFolder(folder: string): Promise<void> {
  await rm(folder, { recursive: true, force: true });
  joinsUnderWay.delete(folder);
}

/**
 * Removes from `folder` the work folders of joins no live process owns: what a hard crash (or a kill) left
 * mid-join, up to several times the episode's size as float WAV. Each removal is told to `log`.
 */
export async function sweepCutJoins(folder: string, log: (line: string) => void): Promise<void> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const path = join(folder, entry.name);
    if (!entry.isDirectory() || !JOIN_FOLDER.test(entry.name) || (await isLive(path))) continue;
    const bytes = await bytesUnder(path);
    const failed = await rm(path, { recursive: true, force: true }).then(
      () => undefined,
      (err: Error) => err,
    );
    if (failed) log(`could not remove ${path}, the work of an intro and outro join cut short: ${failed.message}`);
    else log(`removed ${path} (${(bytes / 1024 ** 2).toFixed(1)} MiB): the work of an intro and outro join cut short`);
  }
}

async function isLive(path: string): Promise<boolean> {
  if (joinsUnderWay.has(path) || [...joinsStarting].some((prefix) => path.startsWith(prefix))) return true;
  const owner = await readFile(join(path, OWNER_FILE), 'utf8')
    .then((text) => JSON.parse(text) as Partial<Owner>)
    .catch(() => undefined);
  if (typeof owner?.pid !== 'number' || typeof owner.host !== 'string') return false; // cut before its note
  // This process's own pid in an earlier life (a restarted container often gets the same one): not live.
  if (owner.host === hostname() && (owner.pid === process.pid || !isRunning(owner.pid))) return false;
  const changed = await stat(path).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  return Date.now() - changed < ABANDONED_AFTER_MS;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
