// The Node-RED 5 run installs from test/node-red-5/'s package.json and package-lock.json only: they pin
// node-red 5 and Node 22, carry the package's own dependencies, and agree with each other.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const PIN_AGAIN = 'pin again: `npm install --package-lock-only` in test/node-red-5';
/** What the run pins on top of the package's own dependencies. */
const PINNED_HERE = ['node-red', '@node-red/registry', 'node'];

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}
interface Lockfile {
  packages: Record<string, Partial<Manifest> & { version?: string }>;
}

function readJson<T>(...path: string[]): T {
  return JSON.parse(readFileSync(join(ROOT, ...path), 'utf8')) as T;
}

function without(deps: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(deps).filter(([name]) => !names.includes(name)));
}

describe('the Node-RED 5 run: its pinned dependencies', function () {
  const root = readJson<Manifest>('package.json');
  const pinned = readJson<Manifest>('test', 'node-red-5', 'package.json');
  const lock = readJson<Lockfile>('test', 'node-red-5', 'package-lock.json');

  it('pins node-red 5 and Node 22 to one version each', () => {
    assert.match(pinned.devDependencies['node-red'], /^5\.\d+\.\d+$/);
    assert.equal(pinned.devDependencies['@node-red/registry'], pinned.devDependencies['node-red']);
    // node-red 5 needs Node >= 22.9.
    assert.match(pinned.devDependencies.node, /^22\.(9|[1-9]\d)\.\d+$/);
  });

  it("carries the package's own dependencies, as package.json names them", () => {
    assert.deepEqual(pinned.dependencies, root.dependencies, PIN_AGAIN);
    assert.deepEqual(
      without(pinned.devDependencies, PINNED_HERE),
      without(root.devDependencies, PINNED_HERE),
      PIN_AGAIN,
    );
  });

  it('has a lockfile that agrees with it, so `npm ci` installs exactly the pins', () => {
    const top = lock.packages[''];
    assert.deepEqual(top.dependencies, pinned.dependencies, PIN_AGAIN);
    assert.deepEqual(top.devDependencies, pinned.devDependencies, PIN_AGAIN);
    assert.equal(lock.packages['node_modules/node-red'].version, pinned.devDependencies['node-red']);
    assert.equal(lock.packages['node_modules/node'].version, pinned.devDependencies.node);
  });
});
