// The Node-RED 5 run of `npm test`: node-red 5 needs Node >= 22.9, so this installs Node 22 (the npm
// package `node@22`) into a temporary prefix, copies the built package into a temporary project whose
// devDependencies name node-red 5, and runs the node tests and the browser tests there on Node 22.
// Given test files (globs under dist/, as mocha takes them) as arguments, it runs those instead, as
// `npm run test:editor-load` does with the editor's.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..', '..');
const NODE_RED = process.env.NODE_RED_5_VERSION ?? '^5.0.7';
const NODE = process.env.NODE_22_VERSION ?? 'node@22';
const ALL_SUITES = ['dist/test/nodes/**/*.test.js', 'dist/test/editor/**/*.test.js'];
const SUITES = process.argv.length > 2 ? process.argv.slice(2) : ALL_SUITES;

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): void {
  execFileSync(command, args, { stdio: 'inherit', ...options });
}

function main(): void {
  const work = mkdtempSync(join(tmpdir(), 'node-red-5-'));
  let passed = false;
  try {
    console.log(`\nNode-RED 5 run in ${work}: installing ${NODE} ...`);
    const prefix = join(work, 'node22');
    run('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', NODE], { cwd: work });
    const binDir = join(prefix, 'node_modules', 'node', 'bin');
    // npm and every child process of the tests find Node 22 first.
    const env = { ...process.env, PATH: `${binDir}${delimiter}${process.env.PATH ?? ''}` };

    const project = join(work, 'project');
    for (const entry of [
      'dist',
      'nodes',
      'plugins',
      'resources',
      'models',
      'icons',
      'examples',
      'README.md',
      'LICENSE',
    ]) {
      cpSync(join(ROOT, entry), join(project, entry), { recursive: true });
    }
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    pkg.devDependencies['node-red'] = NODE_RED;
    pkg.devDependencies['@node-red/registry'] = NODE_RED;
    writeFileSync(join(project, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
    console.log(`installing node-red ${NODE_RED} and the test dependencies on Node 22 ...`);
    run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project, env });
    run(join(binDir, 'node'), ['--version'], { cwd: project, env });
    run(
      join(binDir, 'node'),
      [
        join(project, 'node_modules', 'mocha', 'bin', 'mocha.js'),
        '--no-config',
        '--timeout',
        '60000',
        '--exit',
        ...SUITES,
      ],
      { cwd: project, env },
    );
    passed = true;
  } finally {
    // Kept when it failed: the screenshots and the installed tree say why.
    if (passed) rmSync(work, { recursive: true, force: true });
    else console.error(`Node-RED 5 run failed; its files are in ${work}`);
  }
}

try {
  main();
} catch {
  process.exit(1);
}
