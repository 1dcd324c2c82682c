// The soak's child processes (the engine, Node-RED): each one's output kept and written to a log file,
// and every one still alive killed when the soak ends, however it ends (done, failed, Ctrl-C).
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync } from 'node:fs';

export interface RunningProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything it printed, stdout and stderr interleaved. */
  output: () => string;
  alive(): boolean;
  /** kill -9, as a crash or an out-of-memory killer would; resolves once it is gone. */
  crash(): Promise<void>;
  /** SIGINT, then SIGKILL if it is still there after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<ChildProcess>();

/** Keeps `child`'s output in memory and in `logFile`, and kills it when the soak ends. */
export function supervise(child: ChildProcess, logFile: string): RunningProcess {
  if (child.pid === undefined) throw new Error(`${logFile}: the process did not start`);
  live.add(child);
  const exited = once(child, 'exit').then(() => undefined);
  void exited.then(() => live.delete(child));
  let text = '';
  const keep = (chunk: Buffer) => {
    text += chunk.toString();
    appendFileSync(logFile, chunk);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const alive = () => child.exitCode === null && child.signalCode === null;
  const end = async (signal: NodeJS.Signals, graceMs: number) => {
    if (!alive()) return;
    child.kill(signal);
    const timer = setTimeout(() => alive() && child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return {
    child,
    pid: child.pid,
    output: () => text,
    alive,
    crash: () => end('SIGKILL', 0),
    stop: (graceMs = 20_000) => end('SIGINT', graceMs),
  };
}

/** Kills every supervised process at once (synchronous: also usable in an 'exit' handler). */
export function killAll(): void {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}
