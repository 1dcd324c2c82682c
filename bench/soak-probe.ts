// Resident memory and open file descriptors of a process, as Linux reports them in /proc.
import { promises as fsp } from 'node:fs';

export interface ProcessSample {
  label: string;
  pid: number;
  rssMiB: number;
  openFds: number;
}

export async function sampleProcess(pid: number, label: string): Promise<ProcessSample | undefined> {
  try {
    const status = await fsp.readFile(`/proc/${pid}/status`, 'utf8');
    const rssKiB = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1]);
    const openFds = (await fsp.readdir(`/proc/${pid}/fd`)).length;
    return { label, pid, rssMiB: Math.round((rssKiB / 1024) * 10) / 10, openFds };
  } catch {
    return undefined; // the process is gone
  }
}
