// Runs test files as several mocha processes at once ("lanes"): most files of the rest suite spend their
// time waiting (on restarts, redeploys, polls, Redis, Ceph, a browser), about a third of a core each over
// their run, so a 2-core machine runs three of them side by side in about the time of one.
//
// The files are cut into jobs (planJobs): a file that takes long is a job of its own, short ones are
// batched so that each mocha process's start is paid once per batch, and the files of a serial group
// (those that must never run beside each other: each Ceph cluster holds gigabytes) run in one job, one
// after another. A file whose claim hangs on the machine's pace (a delay heard in real time, a progress
// estimate) runs alone: beside it only jobs that barely use the CPU (LIGHT_CORES). Those go first, one
// after another; then the others, longest first, each in the first lane free. A job's output is held and
// printed whole when it ends, so the report reads file by file; each job's file times land in
// test-artifacts/file-times/ and are merged into one table for the suite.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileTime } from './file-times-reporter';
import { ROOT } from './suites';

/** A test file's measured cost, in seconds (file-costs.json, from a whole run's file times). */
export interface FileCost {
  wall: number;
  cpu: number;
}

/** One mocha process: the files it runs, one after another, their estimated wall time and CPU share. */
export interface Job {
  files: string[];
  seconds: number;
  /** Cores it keeps busy on average (CPU time over wall time, as measured). */
  cores: number;
  /** Runs with only light jobs beside it. */
  alone?: boolean;
}

/** Cores a job may keep busy and still run beside one that runs alone. */
export const LIGHT_CORES = 0.15;

/** What a file not yet measured is taken to cost. */
export const UNMEASURED: FileCost = { wall: 10, cpu: 5 };

/**
 * The costs of `suite`'s files kept in test/suites/file-costs.json, by suite (written by
 * `file-times.js --save` from a whole run); an area's files take the rest suite's.
 */
export function readCosts(suite = 'rest', root = ROOT): Record<string, FileCost> {
  let kept: Record<string, Record<string, FileCost>> = {};
  try {
    kept = JSON.parse(readFileSync(join(root, 'test', 'suites', 'file-costs.json'), 'utf8')) as typeof kept;
  } catch {
    // none kept yet: every file is UNMEASURED
  }
  return kept[suite] ?? kept.rest ?? {};
}

export interface PlanOptions {
  /** Files that must never run beside each other: each group's files in one job, in its order. */
  serialGroups?: readonly (readonly string[])[];
  /** Files that run alone (with only light jobs beside them). */
  alone?: readonly string[];
  /** Shorter files are batched up to about this many seconds a job. */
  batchSeconds?: number;
}

/**
 * The jobs for `files`: those that run alone first, then the others longest first. Each serial group's
 * files are one job; a file of at least `batchSeconds` is a job alone; shorter ones are batched.
 */
export function planJobs(
  files: readonly string[],
  costs: Readonly<Record<string, FileCost>>,
  { serialGroups = [], alone = [], batchSeconds = 20 }: PlanOptions = {},
): Job[] {
  const cost = (file: string) => costs[file] ?? UNMEASURED;
  const job = (members: string[], runsAlone = false): Job => {
    const seconds = members.reduce((sum, file) => sum + cost(file).wall, 0);
    const cpu = members.reduce((sum, file) => sum + cost(file).cpu, 0);
    return { files: members, seconds, cores: cpu / Math.max(seconds, 0.001), ...(runsAlone && { alone: true }) };
  };
  const jobs: Job[] = [];
  const placed = new Set<string>();
  for (const group of serialGroups) {
    const members = group.filter((file) => files.includes(file));
    members.forEach((file) => placed.add(file));
    if (members.length) jobs.push(job(members));
  }
  for (const file of alone.filter((name) => files.includes(name) && !placed.has(name))) {
    placed.add(file);
    jobs.push(job([file], true));
  }
  const rest = files.filter((file) => !placed.has(file)).sort((a, b) => cost(b).wall - cost(a).wall);
  let batch: string[] | undefined;
  const batches: string[][] = [];
  for (const file of rest) {
    if (cost(file).wall >= batchSeconds) {
      batches.push([file]);
      continue;
    }
    const batchWall = batch?.reduce((sum, name) => sum + cost(name).wall, 0) ?? Infinity;
    if (!batch || batchWall + cost(file).wall > batchSeconds) {
      batch = [];
      batches.push(batch);
    }
    batch.push(file);
  }
  jobs.push(...batches.map((members) => job(members)));
  return jobs.sort((a, b) => Number(!!b.alone) - Number(!!a.alone) || b.seconds - a.seconds);
}

/** Whether `job` may start beside the jobs running now: one that runs alone has only light ones beside it. */
export function mayStart(job: Job, running: readonly Job[]): boolean {
  if (running.some((other) => other.alone)) return !job.alone && job.cores <= LIGHT_CORES;
  return !job.alone || running.every((other) => other.cores <= LIGHT_CORES);
}

/** How to start one job's mocha: the program, its arguments (ending with the files), where, with what. */
export interface Runner {
  command: string;
  args(files: string[], timesName: string): string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /**
   * Asked when a job is about to start: settles once the runner can (the Node-RED 5 project installed); a
   * rejection fails the job. A function, so that a rejection is made only when a job awaits it.
   */
  ready?: () => Promise<unknown>;
}

/** The jobs of one suite and how to run them. */
export interface SuiteJobs {
  suite: string;
  jobs: Job[];
  runner: Runner;
}

export interface SuiteResult {
  suite: string;
  failedJobs: number;
  times: FileTime[];
}

const FILE_TIMES = join(ROOT, 'test-artifacts', 'file-times');

/**
 * Runs the suites' jobs in `lanes` processes at once, in the order given (each suite's longest first);
 * resolves when all have ended, with what failed in each suite.
 */
export async function runInLanes(suites: SuiteJobs[], lanes: number): Promise<SuiteResult[]> {
  const started = performance.now();
  suites.forEach(({ suite }) => removeParts(suite)); // left by a run that was cut short
  const queue = suites.flatMap(({ suite, jobs, runner }) =>
    jobs.map((job, index) => ({ suite, job, runner, name: `${suite}.${index + 1}` })),
  );
  const failedJobs = new Map(suites.map(({ suite }) => [suite, 0]));
  const running: Job[] = [];
  // Lanes that found nothing they may start wait for a job to end.
  let ended: () => void = () => undefined;
  let anEnd = new Promise<void>((resolve) => (ended = resolve));
  const lane = async (): Promise<void> => {
    while (queue.length > 0) {
      const index = queue.findIndex((next) => mayStart(next.job, running));
      if (index < 0) {
        await anEnd;
        continue;
      }
      const [next] = queue.splice(index, 1);
      running.push(next.job);
      const { ok, output } = await runJob(next.runner, next.job.files, next.name);
      running.splice(running.indexOf(next.job), 1);
      ended();
      anEnd = new Promise<void>((resolve) => (ended = resolve));
      if (!ok) failedJobs.set(next.suite, failedJobs.get(next.suite)! + 1);
      const seconds = ((performance.now() - started) / 1000).toFixed(0);
      const alone = next.job.alone ? ', alone' : '';
      const title = `── ${next.name}: ${next.job.files.length} files${alone}, ${ok ? 'passed' : 'FAILED'} at ${seconds} s ──`;
      process.stdout.write(`\n${title}\n${next.job.files.map((file) => `   ${file}`).join('\n')}\n${output}`);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, lanes) }, lane));
  return suites.map(({ suite, jobs }) => ({
    suite,
    failedJobs: failedJobs.get(suite)!,
    times: mergeTimes(suite, jobs.length),
  }));
}

async function runJob(runner: Runner, files: string[], timesName: string): Promise<{ ok: boolean; output: string }> {
  try {
    await runner.ready?.();
  } catch (err) {
    return { ok: false, output: `${(err as Error).message}\n` };
  }
  const child = spawn(runner.command, runner.args(files, timesName), {
    cwd: runner.cwd,
    env: runner.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
  return new Promise((resolve) => {
    child.once('error', (err) => resolve({ ok: false, output: `mocha did not start: ${err.message}\n` }));
    child.once('close', (code, signal) => {
      const ended = signal ? `mocha ended on ${signal}\n` : '';
      resolve({ ok: code === 0, output: Buffer.concat(output).toString() + ended });
    });
  });
}

/** The jobs' file-times files of `suite`: `<suite>.<job>.json`. */
function partsOf(suite: string): string[] {
  mkdirSync(FILE_TIMES, { recursive: true });
  return readdirSync(FILE_TIMES)
    .filter((name) => name.startsWith(`${suite}.`) && /\.\d+\.json$/.test(name))
    .map((name) => join(FILE_TIMES, name));
}

function removeParts(suite: string): void {
  for (const path of partsOf(suite)) rmSync(path);
}

/** Joins the jobs' file times into `<suite>.json`, removing the parts. */
function mergeTimes(suite: string, jobs: number): FileTime[] {
  const parts = partsOf(suite);
  const times = parts.flatMap((path) => JSON.parse(readFileSync(path, 'utf8')) as FileTime[]);
  removeParts(suite);
  if (parts.length < jobs) console.error(`${suite}: ${jobs - parts.length} of ${jobs} jobs wrote no file times`);
  writeFileSync(join(FILE_TIMES, `${suite}.json`), `${JSON.stringify(times, null, 2)}\n`);
  return times;
}
