// What `npm test` runs after the unit suite: every other test, then the Node-RED 5 run. Most of that time
// is spent waiting (timers, restarts, Redis, Ceph, npm), not computing, so the parts overlap:
// - the Node-RED 5 project's `npm ci` (network and disk) starts first and goes on in the background;
// - the rest suite runs as two mocha processes side by side: `rest-computing` (the tests whose claims
//   hang on CPU time or timing, and whatever has not been sorted) reports live, and `rest-waiting` (the
//   tests that mostly wait, WAITING_TESTS in suites.ts) writes its report to
//   test-artifacts/rest-waiting.log, printed whole once both have ended, so the two reports never
//   interleave; with WAITING_TESTS empty, the rest suite runs in one process;
// - the Node-RED 5 tests run once both halves passed and the install is done.
// The run fails when either half fails, when the install fails (with npm's output) or the Node-RED 5
// tests fail.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_SUITES, startNodeRed5Project } from '../node-red-5/project';
import { mochaArgs } from './run';
import { ROOT, WAITING_TESTS } from './suites';

const WAITING_LOG = join(ROOT, 'test-artifacts', 'rest-waiting.log');

interface Ended {
  failed: boolean;
  seconds: number;
}

/** Runs mocha on the suite; its report goes to the terminal, or into `log` when one is named. */
function runSuite(suite: string, log?: string): Promise<Ended> {
  const started = Date.now();
  const args = mochaArgs(suite);
  // A report written to a file keeps the colours it would have had on this terminal.
  if (log && process.stdout.isTTY) args.push('--color');
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: log ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  if (log) {
    mkdirSync(join(log, '..'), { recursive: true });
    const file = createWriteStream(log);
    child.stdout!.pipe(file);
    child.stderr!.pipe(file);
  }
  return new Promise((resolve) => {
    child.once('error', (err) => {
      console.error(`mocha for ${suite} did not start: ${err.message}`);
      resolve({ failed: true, seconds: 0 });
    });
    child.once('close', (code, signal) => {
      if (signal) console.error(`mocha for ${suite} ended on ${signal}`);
      resolve({ failed: code !== 0, seconds: Math.round((Date.now() - started) / 1000) });
    });
  });
}

async function main(): Promise<number> {
  const nodeRed5 = startNodeRed5Project();
  let failed: boolean;
  if (WAITING_TESTS.length === 0) {
    // Nothing listed to run beside: the rest suite in one process (mocha given no file would fail).
    failed = (await runSuite('rest')).failed;
  } else {
    console.log(`The rest suite, as two mocha processes side by side: rest-computing reports here,`);
    console.log(`rest-waiting into ${WAITING_LOG}, shown once both have ended.`);
    const [computing, waiting] = await Promise.all([runSuite('rest-computing'), runSuite('rest-waiting', WAITING_LOG)]);
    console.log(`\n=== rest-waiting (ran beside rest-computing), from ${WAITING_LOG} ===`);
    console.log(readFileSync(WAITING_LOG, 'utf8'));
    console.log(`rest-computing ${verdict(computing)}; rest-waiting ${verdict(waiting)}.`);
    failed = computing.failed || waiting.failed;
  }
  if (failed) {
    nodeRed5.cancel();
    console.error('The rest suite failed: the Node-RED 5 run does not start.');
    return 1;
  }

  let installSeconds: number;
  try {
    installSeconds = await nodeRed5.installed;
  } catch (err) {
    console.error((err as Error).message);
    nodeRed5.finish(false);
    return 1;
  }
  console.log(`Node-RED 5 run: npm ci installed the pinned project in ${installSeconds} s, beside the rest suite`);
  let passed = false;
  try {
    nodeRed5.runMocha(ALL_SUITES);
    passed = true;
  } catch {
    // mocha has reported the failures.
  } finally {
    nodeRed5.finish(passed);
  }
  return passed ? 0 : 1;
}

function verdict({ failed, seconds }: Ended): string {
  return `${failed ? 'FAILED' : 'passed'} in ${seconds} s`;
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
