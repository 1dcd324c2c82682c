// Runs client processes (shared-limiter-worker.js) against one engine and reads what the engine logged:
// shared by the multi-process tests and the benchmark.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { AccessLogEntry } from '../../src/engine';
import type { WorkerConfig, WorkerResult } from './shared-limiter-worker';

const WORKER = join(__dirname, 'shared-limiter-worker.js');

export interface RunningWorker {
  done: Promise<WorkerResult>;
}

/** Starts one client process; its promise rejects if the process fails or outlives `maxMs`. */
export function startWorker(config: WorkerConfig, maxMs: number): RunningWorker {
  const child = spawn(process.execPath, [WORKER, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const done = new Promise<WorkerResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`a client process did not finish within ${maxMs} ms (a call hangs?)\n${err}`));
    }, maxMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(JSON.parse(out.trim().split('\n').pop()!) as WorkerResult);
      else reject(new Error(`a client process exited with ${code}\n${err}`));
    });
  });
  return { done };
}

export interface WindowReport {
  accepted: number;
  rejected429: number;
  /** Most accepted in any rolling window. */
  busiestWindow: number;
}

/** What the engine accepted and refused for requests whose path matches, over rolling windows of `windowMs`. */
export function windowReport(log: AccessLogEntry[], match: (path: string) => boolean, windowMs: number): WindowReport {
  const mine = log.filter((r) => match(r.path));
  const times = mine
    .filter((r) => r.status !== 429)
    .map((r) => r.at)
    .sort((a, b) => a - b);
  let busiest = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while (times[end] - times[start] >= windowMs) start++;
    busiest = Math.max(busiest, end - start + 1);
  }
  return { accepted: times.length, rejected429: mine.length - times.length, busiestWindow: busiest };
}

export const isUpload = (path: string) => path === '/v2/medias';
export const isMetadata = (path: string) => path.endsWith('/metadata');
