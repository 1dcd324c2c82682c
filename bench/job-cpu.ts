// CPU time of a piece of work in this process and in the programs it starts (ffmpeg, ffprobe), in seconds.
// The children's share is what Linux counts for the children this process has waited for
// (/proc/self/stat's cutime and cstime), so a wall clock on a loaded machine does not blur the figure.
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's times (USER_HZ: 100 on every Linux that Node runs on). */
const TICKS_PER_SECOND = 100;

function childrenSeconds(): number {
  // The fields after the command's closing parenthesis; cutime and cstime are the 14th and 15th of them.
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

export interface CpuSeconds {
  /** This process. */
  own: number;
  /** The programs it started and waited for. */
  children: number;
  total: number;
}

export async function cpuSeconds(work: () => Promise<unknown>): Promise<CpuSeconds> {
  const ownBefore = process.cpuUsage();
  const childrenBefore = childrenSeconds();
  await work();
  const used = process.cpuUsage(ownBefore);
  const own = (used.user + used.system) / 1e6;
  const children = childrenSeconds() - childrenBefore;
  return { own, children, total: own + children };
}
