// The Node-RED 5 run on its own: `node dist/test/node-red-5/run.js [globs]` installs the pinned project
// (project.ts) and runs the node tests and the browser tests there on Node 22. Given test files (globs
// under dist/, as mocha takes them) as arguments, it runs those instead, as `npm run test:editor-load`
// does with the editor's. `npm test` runs the same project through test/suites/after-unit.ts, which
// installs it while the rest suite runs. After a change to the package's dependencies, pin again:
// `npm install --package-lock-only` in test/node-red-5 (pinned.test.ts says when).
import { ALL_SUITES, startNodeRed5Project } from './project';

async function main(): Promise<void> {
  const suites = process.argv.length > 2 ? process.argv.slice(2) : ALL_SUITES;
  const project = startNodeRed5Project();
  let passed = false;
  try {
    const seconds = await project.installed;
    console.log(`Node-RED 5 run: npm ci installed the pinned project in ${seconds} s`);
    project.runMocha(suites);
    passed = true;
  } catch (err) {
    // mocha has reported its failures itself; an install that failed says so here, with npm's output.
    if (!(err instanceof Error && 'status' in err)) console.error((err as Error).message);
  } finally {
    project.finish(passed);
  }
  process.exitCode = passed ? 0 : 1;
}

void main();
