// What `npm test` runs after the unit suite: every other test, then the Node-RED 5 run. The Node-RED 5
// project's `npm ci` (network and disk, 80-90 s) starts first and goes on in the background while the rest
// suite runs; its tests run once the rest suite passed and the install is done. The run fails when the
// rest suite fails, when the install fails (with npm's output) or when the Node-RED 5 tests fail.
import { spawn } from 'node:child_process';
import { ALL_SUITES, startNodeRed5Project } from '../node-red-5/project';
import { mochaArgs } from './run';
import { ROOT } from './suites';

/** Runs mocha on the suite, its report to the terminal; whether it failed. */
function runSuite(suite: string): Promise<boolean> {
  const child = spawn(process.execPath, mochaArgs(suite), { cwd: ROOT, stdio: 'inherit' });
  return new Promise((resolve) => {
    child.once('error', (err) => {
      console.error(`mocha for ${suite} did not start: ${err.message}`);
      resolve(true);
    });
    child.once('close', (code, signal) => {
      if (signal) console.error(`mocha for ${suite} ended on ${signal}`);
      resolve(code !== 0);
    });
  });
}

async function main(): Promise<number> {
  const nodeRed5 = startNodeRed5Project();
  const failed = await runSuite('rest');
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

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
