// A CPU hog for runs that must hold on a busy machine, as CI machines sometimes are: one child process
// per core spinning at low priority, so every core is taken and whatever else runs waits for the
// scheduler now and then, without starving. A child also ends on its own once the process that started
// it is gone (it looks between 100 ms slices), so no hog outlives its run, even one killed with SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism, constants, setPriority } from 'node:os';

/** The child's program: spins until the process whose pid it is given is gone. */
const SPIN = `const parent = Number(process.argv[1]);
for (;;) {
  const end = Date.now() + 100;
  while (Date.now() < end);
  try { process.kill(parent, 0); } catch { process.exit(0); }
}`;

export interface CpuHog {
  readonly pids: number[];
  readonly priority: number;
  /** Kills every spinning child; safe to call more than once. */
  stop(): void;
}

/** Starts one spinning child per core at `priority` (a nice value: 19, the lowest, unless told). */
export function startCpuHog(priority: number = constants.priority.PRIORITY_LOW): CpuHog {
  const children: ChildProcess[] = [];
  const stop = () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', stop);
  try {
    for (let core = 0; core < availableParallelism(); core++) {
      const child = spawn(process.execPath, ['-e', SPIN, String(process.pid)], { stdio: 'ignore' });
      children.push(child);
      setPriority(child.pid!, priority);
    }
  } catch (error) {
    stop();
    throw error;
  }
  return { pids: children.map((child) => child.pid!), priority, stop };
}
