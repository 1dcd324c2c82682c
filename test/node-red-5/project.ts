// The Node-RED 5 project: node-red 5 needs Node >= 22.9. This copies the built package into a temporary
// project whose dependencies are the ones pinned beside this file (package.json and its package-lock.json:
// the package's own, node-red 5 and the npm package `node` 22), installs exactly those with `npm ci`, and
// runs mocha there on that Node 22. The install is started apart from the run so that `npm test` can let
// it go on in the background while the rest suite runs (it mostly waits on the network and the disk).
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { planJobs, readCosts, type Runner, type SuiteJobs } from '../suites/lanes';
import { builtPath } from '../suites/suites';

const ROOT = resolve(__dirname, '..', '..', '..');
/** The pinned project: test/node-red-5/ in the checkout (this file runs from dist/test/node-red-5/). */
const PINNED = join(ROOT, 'test', 'node-red-5');
/** What the package publishes, copied into the project as an installed package would hold it. */
const PACKAGE_ENTRIES = [
  'dist',
  'nodes',
  'plugins',
  'resources',
  'models',
  'icons',
  'examples',
  'README.md',
  'LICENSE',
];
/**
 * What `npm test` runs on Node-RED 5 (and Node 22): the tests of what differs between Node-RED 4 and 5.
 * The editor (its dialogs, palette, import, deploy warnings, the sidebar plugin), loading (the package
 * installed as a user installs it, several Node-RED processes), the runtime's APIs the nodes use (create,
 * input/send/done, status, close on redeploy and removal, full deploys and restarts, config nodes shared,
 * settings, Catch), the admin routes a plugin adds, and the worker threads of live streams. The other
 * node tests check the package's own logic through the same APIs, so they run on Node-RED 4 only.
 */
export const NODE_RED_5_TESTS: readonly string[] = [
  'test/editor/editor.test.ts',
  'test/editor/sidebar.test.ts',
  'test/editor/deploy-warning.test.ts',
  'test/nodes/installed-package.test.ts',
  'test/nodes/shared-limits-node-red.test.ts',
  'test/nodes/lifecycle.test.ts',
  'test/nodes/kept-messages.test.ts',
  'test/nodes/enhance-file.test.ts',
  'test/nodes/bad-input.test.ts',
  'test/nodes/progress-status.test.ts',
  'test/nodes/shared-client.test.ts',
  'test/nodes/settings-once.test.ts',
  'test/nodes/enhance-stream.test.ts',
  'test/sidebar/admin-routes-node-red.test.ts',
];

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

export interface NodeRed5Project {
  /** The temporary folder: the project, and what a failed run leaves to look at. */
  work: string;
  /** Resolves with its seconds once `npm ci` has installed the project; rejects, with npm's output, when it failed. */
  installed: Promise<number>;
  /** Runs mocha on the project's Node 22 with the given globs (under dist/), in one process; throws when a test failed. */
  runMocha(suites: readonly string[]): void;
  /** How lanes run mocha there on built test files (lanes.ts); ready once the project is installed. */
  runner: Runner;
  /** Removes the folder after a run that passed; keeps it, saying where, after one that failed. */
  finish(passed: boolean): void;
  /** Stops the install if it still runs and removes the folder: the run will not happen. */
  cancel(): void;
}

/** Copies the package into a new temporary project and starts `npm ci` there, without waiting for it. */
export function startNodeRed5Project(): NodeRed5Project {
  const work = mkdtempSync(join(tmpdir(), 'node-red-5-'));
  const project = join(work, 'project');
  for (const entry of PACKAGE_ENTRIES) cpSync(join(ROOT, entry), join(project, entry), { recursive: true });
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
  const install = npmCi(project);
  const { installed } = install;
  // Awaited later (after the rest suite, in `npm test`): a failure is reported then, not as unhandled now.
  installed.catch(() => undefined);

  let installFailureTold = false;
  const binDir = join(project, 'node_modules', 'node', 'bin');
  // Every child process of the tests finds Node 22 first.
  const env = { ...process.env, PATH: `${binDir}${delimiter}${process.env.PATH ?? ''}` };
  return {
    work,
    installed,
    runMocha(suites) {
      execFileSync(join(binDir, 'node'), ['--version'], { cwd: project, env, stdio: 'inherit' });
      execFileSync(join(binDir, 'node'), mochaArgs(suites, 'node-red-5'), { cwd: project, env, stdio: 'inherit' });
    },
    runner: {
      command: join(binDir, 'node'),
      args: (files, timesName) => mochaArgs(files, timesName),
      cwd: project,
      env,
      // npm's output is told once, by the first job to wait; the others only name the failure.
      ready: () =>
        installed.catch((err: Error) => {
          if (!installFailureTold) console.error(err.message);
          installFailureTold = true;
          throw new Error('the Node-RED 5 project did not install (npm ci failed: its output is above)');
        }),
    },
    finish(passed) {
      // Kept when it failed: the screenshots and the installed tree say why.
      if (passed) rmSync(work, { recursive: true, force: true });
      else console.error(`Node-RED 5 run failed; its files are in ${work}`);
    },
    cancel() {
      install.stop();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** NODE_RED_5_TESTS as jobs for lanes, run in the project (lanes.ts). */
export function nodeRed5Suite(project: NodeRed5Project): SuiteJobs {
  const jobs = planJobs(NODE_RED_5_TESTS, readCosts('node-red-5'));
  return {
    suite: 'node-red-5',
    jobs: jobs.map((job) => ({ ...job, files: job.files.map(builtPath) })),
    runner: project.runner,
  };
}

/**
 * Node 22's arguments for the project's mocha on `files` (or globs, under dist/): each file's times go
 * to the checkout's test-artifacts/file-times/ as `timesName`.
 */
function mochaArgs(files: readonly string[], timesName: string): string[] {
  const mocha = join('node_modules', 'mocha', 'bin', 'mocha.js');
  const reporter = ['--reporter', 'dist/test/suites/file-times-reporter.js', '--reporter-option', `name=${timesName}`];
  reporter.push('--reporter-option', `folder=${join(ROOT, 'test-artifacts', 'file-times')}`);
  return [mocha, '--no-config', '--timeout', '60000', '--exit', ...reporter, ...files];
}

/** `npm ci` in the project, its output kept for the error (it would otherwise cut into the tests' report). */
function npmCi(project: string): { installed: Promise<number>; stop(): void } {
  const started = Date.now();
  // onnxruntime-node's install fetches GPU libraries unless told to skip them (the tests use its CPU build).
  const child = spawn('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: project,
    env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
  const installed = new Promise<number>((resolvePromise, reject) => {
    child.once('error', (err) => reject(new Error(`npm ci in ${project} did not start: ${err.message}`)));
    child.once('close', (code, signal) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      if (code === 0) resolvePromise(seconds);
      else
        reject(
          new Error(
            `npm ci of the Node-RED 5 project in ${project} failed (${signal ?? `exit code ${code}`}) after ${seconds} s:\n${Buffer.concat(output).toString()}`,
          ),
        );
    });
  });
  return {
    installed,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}
