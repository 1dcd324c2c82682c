// What `npm test` runs after the unit suite: every other test on Node-RED 4, and the tests of what
// differs on Node-RED 5 (NODE_RED_5_TESTS), all in lanes (lanes.ts): several mocha processes at once,
// the longest files first. The Node-RED 5 project's `npm ci` (network and disk, 80-90 s) starts first and
// goes on while the rest suite runs; its jobs come after the rest suite's in the queue and each waits
// for the install. The run fails when a test fails or the install fails (with npm's output).
import { nodeRed5Suite, startNodeRed5Project } from '../node-red-5/project';
import { runSuitesInLanes, suiteJobs } from './run';

async function main(): Promise<number> {
  const nodeRed5 = startNodeRed5Project();
  let passed = false;
  try {
    passed = await runSuitesInLanes([suiteJobs('rest'), nodeRed5Suite(nodeRed5)]);
    const installSeconds = await nodeRed5.installed.catch(() => undefined);
    if (installSeconds !== undefined)
      console.log(`Node-RED 5: npm ci installed the pinned project in ${installSeconds} s, beside the rest suite`);
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
