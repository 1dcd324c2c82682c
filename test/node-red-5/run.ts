// The Node-RED 5 run on its own: `node dist/test/node-red-5/run.js [globs]` installs the pinned project
// (project.ts) and runs NODE_RED_5_TESTS there on Node 22, in lanes as `npm test` does. Given test files
// (globs under dist/, as mocha takes them) as arguments, it runs those instead, in one mocha process, as
// `npm run test:editor-load` does with the editor's. `npm test` runs the same project through
// test/suites/after-unit.ts, which installs it while the rest suite runs. After a change to the
// package's dependencies, pin again: `npm install --package-lock-only` in test/node-red-5 (pinned.test.ts
// says when).
import { runSuitesInLanes } from '../suites/run';
import { nodeRed5Suite, startNodeRed5Project } from './project';

async function main(): Promise<void> {
  const globs = process.argv.slice(2);
  const project = startNodeRed5Project();
  let passed = false;
  try {
    const seconds = await project.installed;
    console.log(`Node-RED 5 run: npm ci installed the pinned project in ${seconds} s`);
    if (globs.length) {
      project.runMocha(globs);
      passed = true;
    } else {
      passed = await runSuitesInLanes([nodeRed5Suite(project)]);
    }
  } catch (err) {
    // mocha has reported its failures itself; an install that failed says so here, with npm's output.
    if (!(err instanceof Error && 'status' in err)) console.error((err as Error).message);
  } finally {
    project.finish(passed);
  }
  process.exitCode = passed ? 0 : 1;
}

void main();
