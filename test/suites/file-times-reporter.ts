// A mocha reporter: the spec reporter's output, and a table of each test file's wall time and the
// machine's CPU time over it, written to test-artifacts/file-times/<suite>.json when the run ends
// (`--reporter-option name=<suite>`, and `folder=<path>` for another folder). The
// CPU figure is the whole machine's busy time (/proc/stat) while the file ran, so it counts the Node-RED,
// engine, ffmpeg and browser processes a test starts, and also anything else the machine runs: measure
// on an otherwise quiet machine. `node dist/test/suites/file-times.js` prints the tables.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import Mocha from 'mocha';
import { ROOT } from './suites';

/** One file's figures. */
export interface FileTime {
  file: string;
  wallSeconds: number;
  /** The machine's busy CPU seconds (all cores) while the file ran. */
  cpuSeconds: number;
  tests: number;
  failed: number;
}

/** The machine's busy CPU seconds since boot, all cores together; undefined where /proc/stat is not. */
export function machineBusySeconds(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + steal) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

export default class FileTimesReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
    super(runner, options);
    const times: FileTime[] = [];
    let current: (FileTime & { wallStart: number; cpuStart: number }) | undefined;
    const close = (): void => {
      if (!current) return;
      current.wallSeconds = (performance.now() - current.wallStart) / 1000;
      current.cpuSeconds = (machineBusySeconds() ?? 0) - current.cpuStart;
      const { wallStart: _wall, cpuStart: _cpu, ...figures } = current;
      times.push(figures);
      current = undefined;
    };
    // Mocha runs one file's top-level suites one after another: a top-level suite of another file ends
    // the one before.
    runner.on(Mocha.Runner.constants.EVENT_SUITE_BEGIN, (suite) => {
      if (!suite.parent?.root || !suite.file) return;
      // Named by its source, test/…/x.test.ts, as suites.ts names it.
      const file = relative(join(ROOT, 'dist'), suite.file).replace(/\.js$/, '.ts');
      if (current?.file === file) return;
      close();
      const started = { wallStart: performance.now(), cpuStart: machineBusySeconds() ?? 0 };
      current = { file, wallSeconds: 0, cpuSeconds: 0, tests: 0, failed: 0, ...started };
    });
    runner.on(Mocha.Runner.constants.EVENT_TEST_END, () => {
      if (current) current.tests += 1;
    });
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, () => {
      if (current) current.failed += 1;
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      close();
      const given = (options as { reporterOption?: Record<string, string> }).reporterOption ?? {};
      const folder = given.folder ?? join(ROOT, 'test-artifacts', 'file-times');
      const name = given.name ?? 'run';
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, `${name}.json`), `${JSON.stringify(times, null, 2)}\n`);
    });
  }
}
