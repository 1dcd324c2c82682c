// The test suites themselves: every test file has one area, the unit list names real files, the unit guard
// refuses each way of starting a process, a server or a connection, and a path given to mocha runs alone.
import assert from 'node:assert/strict';
import childProcess from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { AREAS, ROOT, UNIT_TESTS, allTests, areaTests } from './suites';
import { installUnitGuard } from './unit-guard';

describe('test suites', function () {
  it('puts every test file in exactly one area', () => {
    const areasOf = new Map<string, string[]>(allTests().map((file) => [file, []]));
    for (const area of Object.keys(AREAS)) for (const file of areaTests(area)) areasOf.get(file)!.push(area);
    const misplaced = [...areasOf].filter(([, areas]) => areas.length !== 1);
    assert.deepEqual(misplaced, [], 'a test file in no area, or in two, is run by no test:<area> script, or twice');
  });

  it('names in the unit suite only test files that exist, each once', () => {
    const files = new Set(allTests());
    assert.deepEqual(
      UNIT_TESTS.filter((file) => !files.has(file)),
      [],
    );
    assert.equal(new Set(UNIT_TESTS).size, UNIT_TESTS.length);
  });

  it('has a test:<area> script for every area, and test:unit with the guard', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const area of [...Object.keys(AREAS), 'unit'])
      assert.match(scripts[`test:${area}`] ?? '', new RegExp(`dist/test/suites/run\\.js ${area}$`), `test:${area}`);
  });

  it('leaves the spec out of .mocharc.json, so `mocha <file>` runs that file alone', () => {
    const config = JSON.parse(readFileSync(join(ROOT, '.mocharc.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(config.spec, undefined);
  });

  describe('the unit guard', function () {
    let remove: (() => void) | undefined;
    afterEach(() => {
      remove?.();
      remove = undefined;
    });

    for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
      it(`refuses child_process.${name}, naming it`, () => {
        const before = childProcess[name];
        remove = installUnitGuard();
        const start = childProcess[name] as (...args: unknown[]) => unknown;
        assert.throws(() => start(process.execPath, ['--version']), {
          message: new RegExp(`a unit test started a process \\(child_process\\.${name}\\)`),
        });
        remove();
        remove = undefined;
        assert.equal(childProcess[name], before, 'taken away, the guard leaves what was there');
      });
    }

    it('refuses a server and a connection', () => {
      const before = [net.Server.prototype.listen, net.Socket.prototype.connect]; // eslint-disable-line @typescript-eslint/unbound-method -- compared, never called
      remove = installUnitGuard();
      const server = net.createServer();
      assert.throws(() => server.listen(0, '127.0.0.1'), { message: /started a server/ });
      assert.throws(() => net.connect(6379, '127.0.0.1'), { message: /started a connection/ });
      remove();
      remove = undefined;
      assert.deepEqual([net.Server.prototype.listen, net.Socket.prototype.connect], before); // eslint-disable-line @typescript-eslint/unbound-method -- compared, never called
    });
  });
});
