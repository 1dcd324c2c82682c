// Node-RED as a process of its own with this package in its user directory, as npm start, the
// installed-package test and the soak run it: the package packed as npm publishes it, put into the user
// directory, Node-RED's red.js started on that directory, and its admin API awaited.
import { execFileSync, spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { request } from 'undici';

export const ROOT = resolve(__dirname, '..', '..');
export const PACKAGE_NAME = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string }).name;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** `npm pack` of the repository into `destination`; returns the tarball's path. */
export function packPackage(destination: string): string {
  mkdirSync(destination, { recursive: true });
  const packed = JSON.parse(
    execFileSync(npm, ['pack', '--json', '--pack-destination', destination], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  ) as { filename: string }[];
  return join(destination, packed[0].filename);
}

/**
 * Unpacks the tarball into `<userDir>/node_modules/<package>`, where Node-RED looks for installed nodes.
 * Its dependencies are found in the repository's node_modules, so `userDir` must lie inside the repository.
 */
export function unpackPackage(tarball: string, userDir: string): string {
  const target = join(userDir, 'node_modules', ...PACKAGE_NAME.split('/'));
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
  return target;
}

/** Starts Node-RED (this project's devDependency) on `userDir`, in that directory. */
export function spawnNodeRed(
  userDir: string,
  settingsFile: string,
  options: { stdio?: StdioOptions; detached?: boolean; env?: NodeJS.ProcessEnv } = {},
): ChildProcess {
  return spawn(
    process.execPath,
    [require.resolve('node-red/red.js', { paths: [ROOT] }), '--userDir', userDir, '--settings', settingsFile],
    {
      // Relative paths of watch and file nodes are under Node-RED's working folder.
      cwd: userDir,
      stdio: options.stdio ?? ['ignore', 'pipe', 'pipe'],
      detached: options.detached,
      env: options.env ?? process.env,
    },
  );
}

/** Resolves once Node-RED has started its flows and its admin API answers; rejects if it exits or takes longer. */
export async function waitForNodeRed(
  child: ChildProcess,
  baseUrl: string,
  output: () => string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const check = () => {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`Node-RED exited before it started:\n${output()}`);
    if (Date.now() > deadline) throw new Error(`Node-RED did not start within ${timeoutMs / 1000} s:\n${output()}`);
  };
  while (!output().includes('Started flows') && !output().includes('Server now running')) {
    check();
    await new Promise((r) => setTimeout(r, 100));
  }
  while (
    !(await request(`${baseUrl}/settings`).then(
      (r) => (r.body.dump(), r.statusCode === 200),
      () => false,
    ))
  ) {
    check();
    await new Promise((r) => setTimeout(r, 100));
  }
}
