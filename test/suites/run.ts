// Runs one suite of test files with mocha: `node dist/test/suites/run.js <suite> [--watch]`, where a suite
// is `unit`, an area of suites.ts (`client`, `engine`, …), `rest` (every test not in the unit suite) or
// `all`. Files are taken from test/'s sources, so a built file whose source is gone does not run. The
// unit suite runs in one mocha process, under the unit guard; every other suite runs in lanes, several
// mocha processes at once (lanes.ts; TEST_LANES sets how many, 1 for one process at a time). With
// --watch, tsc rebuilds on each change and mocha runs the suite again (`npm run test:watch -- client`).
import { spawn, type ChildProcess } from 'node:child_process';
import { planJobs, readCosts, runInLanes, type SuiteJobs } from './lanes';
import { ALONE_TESTS, AREAS, ROOT, SERIAL_GROUPS, UNIT_TESTS, allTests, areaTests, builtPath } from './suites';

const SUITES = ['unit', ...Object.keys(AREAS), 'rest', 'all'];

/** Mocha processes at once for a suite in lanes: a third of a core is what most files use. */
export const DEFAULT_LANES = 3;

export function lanesWanted(): number {
  const wanted = Number(process.env.TEST_LANES);
  return Number.isInteger(wanted) && wanted >= 1 ? wanted : DEFAULT_LANES;
}

export function testsOf(suite: string): string[] {
  if (suite === 'unit') return [...UNIT_TESTS];
  if (suite === 'all') return allTests();
  if (suite === 'rest') return allTests().filter((file) => !UNIT_TESTS.includes(file));
  return areaTests(suite);
}

/**
 * Node's arguments for mocha on built test files: mocha's script, the unit guard if asked, then either
 * the watch options or the reporter that writes each file's times (as `timesName` in
 * test-artifacts/file-times/), then the files.
 */
export function mochaArgs(
  files: readonly string[],
  options: { unitGuard?: boolean; watch?: boolean; timesName?: string; mochaScript?: string } = {},
): string[] {
  const args = [options.mochaScript ?? require.resolve('mocha/bin/mocha.js')];
  if (options.unitGuard) args.push('--require', builtPath('test/suites/install-unit-guard.ts'));
  if (options.watch) args.push('--watch', '--watch-files', 'dist/src/**/*.js,dist/test/**/*.js');
  else
    args.push(
      '--reporter',
      builtPath('test/suites/file-times-reporter.ts'),
      '--reporter-option',
      `name=${options.timesName ?? 'run'}`,
    );
  return [...args, ...files];
}

/** The suite's files as jobs for lanes, run by this checkout's mocha on this Node. */
export function suiteJobs(suite: string, files = testsOf(suite)): SuiteJobs {
  return {
    suite,
    jobs: planJobs(files, readCosts(), { serialGroups: SERIAL_GROUPS, alone: ALONE_TESTS }),
    runner: {
      command: process.execPath,
      args: (jobFiles, timesName) => mochaArgs(jobFiles.map(builtPath), { timesName }),
      cwd: ROOT,
    },
  };
}

/** Runs the suites in lanes and says what passed; resolves with whether all did. */
export async function runSuitesInLanes(suites: SuiteJobs[], lanes = lanesWanted()): Promise<boolean> {
  const started = performance.now();
  const jobs = suites.reduce((sum, suite) => sum + suite.jobs.length, 0);
  console.log(`${suites.map((s) => s.suite).join(' and ')}: ${jobs} mocha processes in ${lanes} lanes`);
  const results = await runInLanes(suites, lanes);
  const minutes = ((performance.now() - started) / 60_000).toFixed(1);
  console.log('');
  for (const { suite, failedJobs, times } of results) {
    const tests = times.reduce((sum, file) => sum + file.tests, 0);
    const failed = times.flatMap((file) => (file.failed ? [`${file.file} (${file.failed})`] : []));
    const verdict = failedJobs
      ? `FAILED: ${failedJobs} mocha processes failed${failed.length ? `, in ${failed.join(', ')}` : ''}`
      : 'passed';
    console.log(`${suite}: ${tests} tests in ${times.length} files, ${verdict}`);
  }
  console.log(`${minutes} min in ${lanes} lanes; each file's times in test-artifacts/file-times/`);
  return results.every((result) => result.failedJobs === 0);
}

function start(args: string[]): ChildProcess {
  return spawn(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
}

function main(): void {
  const watch = process.argv.includes('--watch');
  const named = process.argv.slice(2).filter((arg) => arg !== '--watch');
  const suite = named[0] ?? (watch ? 'unit' : undefined);
  if (named.length > 1 || suite === undefined || !SUITES.includes(suite)) {
    console.error(`usage: run.js <suite> [--watch], a suite being one of: ${SUITES.join(', ')}`);
    process.exitCode = 2;
    return;
  }
  if (!watch && suite !== 'unit') {
    runSuitesInLanes([suiteJobs(suite)]).then(
      (passed) => (process.exitCode = passed ? 0 : 1),
      (err: unknown) => {
        console.error(err);
        process.exitCode = 1;
      },
    );
    return;
  }
  const files = testsOf(suite).map(builtPath);
  const children = [start(mochaArgs(files, { unitGuard: suite === 'unit', watch, timesName: suite }))];
  if (watch) {
    const tsc = require.resolve('typescript/bin/tsc');
    children.push(start([tsc, '--watch', '--preserveWatchOutput', '--incremental', '-p', 'tsconfig.json']));
    process.on('SIGINT', () => children.forEach((child) => child.kill('SIGINT')));
  }
  children[0].on('exit', (code, signal) => {
    children.slice(1).forEach((child) => child.kill('SIGINT'));
    process.exitCode = code ?? (signal ? 1 : 0);
  });
}

if (require.main === module) main();
