// The Node-RED 5 run of `npm test`: node-red 5 needs Node >= 22.9. This copies the built package into a
// temporary project whose dependencies are the ones pinned beside this file (package.json and its
// package-lock.json: the package's own, node-red 5 and the npm package `node` 22), installs exactly those
// with `npm ci`, and runs the node tests and the browser tests there on that Node 22. Given test files
// (globs under dist/, as mocha takes them) as arguments, it runs those instead, as
// `npm run test:editor-load` does with the editor's. After a change to the package's dependencies, pin
// again: `npm install --package-lock-only` in test/node-red-5 (lockfile.test.ts says when).
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..', '..');
/** The pinned project: test/node-red-5/ in the checkout (this file runs from dist/test/node-red-5/). */
const PINNED = join(ROOT, 'test', 'node-red-5');
const ALL_SUITES = ['dist/test/nodes/**/*.test.js', 'dist/test/editor/**/*.test.js'];
const SUITES = process.argv.length > 2 ? process.argv.slice(2) : ALL_SUITES;

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): void {
  execFileSync(command, args, { stdio: 'inherit', ...options });
}

function main(): void {
  const work = mkdtempSync(join(tmpdir(), 'node-red-5-'));
  let passed = false;
  try {
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
    // The package's own manifest (its node-red section, its name) with the pinned dependencies, and the
    // pinned lockfile: `npm ci` installs exactly what it names, or fails when the two disagree.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
    const pinned = JSON.parse(readFileSync(join(PINNED, 'package.json'), 'utf8')) as Manifest;
    pkg.dependencies = pinned.dependencies;
    pkg.devDependencies = pinned.devDependencies;
    writeFileSync(join(project, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
    copyFileSync(join(PINNED, 'package-lock.json'), join(project, 'package-lock.json'));
    console.log(
      `\nNode-RED 5 run in ${work}: installing the pinned node-red ${pinned.devDependencies['node-red']} and Node ${pinned.devDependencies.node} ...`,
    );
    // onnxruntime-node's install fetches GPU libraries unless told to skip them (the tests use its CPU build).
    run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: project,
      env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' },
    });
    const binDir = join(project, 'node_modules', 'node', 'bin');
    // Every child process of the tests finds Node 22 first.
    const env = { ...process.env, PATH: `${binDir}${delimiter}${process.env.PATH ?? ''}` };
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
