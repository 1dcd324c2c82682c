// Runs one suite of test files with mocha: `node dist/test/suites/run.js <suite> [--watch]`, where a suite
// is `unit`, an area of suites.ts (`client`, `engine`, …), `rest` (every test not in the unit suite) or
// `all`. Files are taken from test/'s sources, so a built file whose source is gone does not run. With
// --watch, tsc rebuilds on each change and mocha runs the suite again (`npm run test:watch -- client`).
import { spawn, type ChildProcess } from 'node:child_process';
import { AREAS, ROOT, UNIT_TESTS, allTests, areaTests, builtPath } from './suites';

const SUITES = ['unit', ...Object.keys(AREAS), 'rest', 'all'];

function testsOf(suite: string): string[] {
  if (suite === 'unit') return [...UNIT_TESTS];
  if (suite === 'all') return allTests();
  if (suite === 'rest') return allTests().filter((file) => !UNIT_TESTS.includes(file));
  return areaTests(suite);
}

/** Node's arguments for mocha on the suite: mocha's script, the unit guard where it applies, the files. */
export function mochaArgs(suite: string, watch = false): string[] {
  const args = [require.resolve('mocha/bin/mocha.js')];
  if (suite === 'unit') args.push('--require', builtPath('test/suites/install-unit-guard.ts'));
  if (watch) args.push('--watch', '--watch-files', 'dist/src/**/*.js,dist/test/**/*.js');
  // The spec reporter's output, and each file's wall and CPU time in test-artifacts/file-times/.
  else args.push('--reporter', builtPath('test/suites/file-times-reporter.ts'), '--reporter-option', `name=${suite}`);
  return [...args, ...testsOf(suite).map(builtPath)];
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
  const children = [start(mochaArgs(suite, watch))];
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
