// Every ffmpeg and ffprobe the engine starts, bounded in time and ended with the engine: a hostile or
// damaged file can make ffmpeg wait forever (an HLS playlist that never ends ignored SIGTERM for a day),
// and a program left running when the engine stops would outlive it under pid 1.
import { spawn, type ChildProcess } from 'node:child_process';

/** Default for how long a run may go without progress before it is killed (EngineOptions.ffmpegStallSeconds). */
export const DEFAULT_STALL_MS = 120_000;

export interface ChildRunOptions {
  /** Most bytes of standard output kept; more fails the run. Default 1 MiB. */
  maxBuffer?: number;
  /**
   * The program writes ffmpeg's `-progress` blocks to standard output: the bound then counts from the
   * last block that moved (time or size written) instead of from the start, so a long file is never cut.
   */
  progress?: boolean;
  /** With `progress`: told the output's time written so far (seconds, from `out_time_us`) each time it moves. */
  onTime?: (seconds: number) => void;
  /** A bound of this run's own instead of the thread's (a quick probe where a client waits for the answer). */
  stallMs?: number;
}

export interface ChildRunOutput {
  stdout: Buffer;
  stderr: string;
}

/** A run that failed: `code` is the exit code, or the spawn error's code (`ENOENT`); `stalled` when the bound killed it. */
export class ChildRunError extends Error {
  constructor(
    message: string,
    readonly code: number | string | undefined,
    readonly stderr: string,
    readonly stalled: boolean,
  ) {
    super(message);
  }
}

interface Settings {
  stallMs: number;
  /** Told of each child started and ended, so the thread that owns the engine can end them when it closes. */
  onChild?: (pid: number, running: boolean) => void;
}

const settings: Settings = { stallMs: DEFAULT_STALL_MS };
const running = new Set<ChildProcess>();

/** Sets this thread's bound and child watcher (the engine's worker threads, at their start). */
export function configureChildRuns(next: Partial<Settings>): void {
  Object.assign(settings, next);
}

/** Ends every child this thread started and is still waiting for (SIGKILL: ffmpeg may ignore SIGTERM). */
export function killChildRuns(): void {
  for (const child of running) child.kill('SIGKILL');
}

// Children started on the main thread go with it, however it ends.
process.once('exit', killChildRuns);

/** Runs `program` with `args` to its end, or kills it when it makes no progress for the bound. */
export function runChild(program: string, args: string[], options: ChildRunOptions = {}): Promise<ChildRunOutput> {
  const maxBuffer = options.maxBuffer ?? 1 << 20;
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let stalled = false;
    let tooLong = false;
    let lastProgress = '';
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        stalled = true;
        child.kill('SIGKILL');
      }, options.stallMs ?? settings.stallMs);
    };
    arm();
    running.add(child);
    if (child.pid !== undefined) settings.onChild?.(child.pid, true);

    child.stdout.on('data', (chunk: Buffer) => {
      if (options.progress) {
        // A block ends with `progress=continue` (or `end`); it moved when its time or size did.
        const text = chunk.toString('latin1');
        const moved = /(?:out_time_us|total_size)=\S+/g;
        const now = (text.match(moved) ?? []).join(' ');
        if (now && now !== lastProgress) {
          lastProgress = now;
          arm();
          // The block's last time: how far the output is, which the job's progress follows.
          const times = [...text.matchAll(/out_time_us=(\d+)/g)];
          if (times.length) options.onTime?.(Number(times[times.length - 1][1]) / 1e6);
        }
        return;
      }
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxBuffer) {
        tooLong = true;
        child.kill('SIGKILL');
      } else stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      // The last words are what tell a failure; a chatty run keeps only its tail.
      stderr = (stderr + chunk.toString('utf8')).slice(-maxBuffer);
    });
    let done = false;
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: NodeJS.ErrnoException) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      running.delete(child);
      if (child.pid !== undefined) settings.onChild?.(child.pid, false);
      if (exitCode === 0 && !stalled && !tooLong) return resolve({ stdout: Buffer.concat(stdout), stderr });
      const seconds = Math.round((options.stallMs ?? settings.stallMs) / 1000);
      const why = spawnError
        ? spawnError.message
        : stalled
          ? `made no progress for ${seconds} s and was stopped`
          : tooLong
            ? `wrote more than ${maxBuffer} bytes of output`
            : signal
              ? `was ended by ${signal}`
              : `exited with code ${exitCode}`;
      reject(new ChildRunError(why, spawnError?.code ?? exitCode ?? undefined, stderr, stalled));
    };
    // A program that could not start (ENOENT) may never close; one that ran closes after its output.
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (child.pid === undefined) finish(null, null, err);
    });
    child.on('close', (exitCode, signal) => finish(exitCode, signal));
  });
}
