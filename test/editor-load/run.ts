// `npm run test:editor-load`: the editor's suites (test/editor/) on Node-RED 4, this project's, and on
// Node-RED 5 (test/node-red-5/run.ts, given the same suites), while a CPU hog keeps every core busy, as
// CI machines sometimes are. A test that types before a dialog is ready, or clicks before a tab is
// there, fails here far more often than on a quiet machine. Not part of `npm test`: it takes as long
// as both editor runs, and the hog would slow every other test. EDITOR_LOAD_NICE sets the hog's nice
// value (19, the lowest priority, unless told).
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { startCpuHog } from './cpu-hog';

const ROOT = resolve(__dirname, '..', '..', '..');
const SUITES = ['dist/test/editor/**/*.test.js'];

interface Outcome {
  run: string;
  passed: boolean;
  seconds: number;
}

function timed(run: string, args: string[]): Outcome {
  console.log(`\n=== ${run} ===`);
  const started = Date.now();
  const { status, error } = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  if (error) console.error(`${run} did not start: ${error.message}`);
  return { run, passed: status === 0, seconds: Math.round((Date.now() - started) / 1000) };
}

function main(): number {
  const nice = process.env.EDITOR_LOAD_NICE;
  const hog = startCpuHog(nice === undefined ? undefined : Number(nice));
  console.log(`CPU hog: ${hog.pids.length} spinning processes at nice ${hog.priority} (pids ${hog.pids.join(', ')})`);
  const outcomes: Outcome[] = [];
  try {
    const mocha = require.resolve('mocha/bin/mocha.js');
    outcomes.push(
      timed('Node-RED 4', [mocha, '--no-config', '--timeout', '60000', '--exit', ...SUITES]),
      timed('Node-RED 5 (with its install)', [join(ROOT, 'dist', 'test', 'node-red-5', 'run.js'), ...SUITES]),
    );
  } finally {
    hog.stop();
  }
  console.log('\nThe editor suites under load:');
  for (const { run, passed, seconds } of outcomes)
    console.log(`  ${run}: ${passed ? 'passed' : 'FAILED'} in ${seconds} s`);
  return outcomes.every((outcome) => outcome.passed) ? 0 : 1;
}

process.exitCode = main();
