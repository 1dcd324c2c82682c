// A mocha reporter: the spec reporter's output, and a table of each test file's wall time and CPU time,
// written to test-artifacts/file-times/<suite>.json when the run ends (`--reporter-option name=<suite>`,
// and `folder=<path>` for another folder). The CPU time is the test process's and its descendants'
// (the Node-RED, engine, ffmpeg, Redis and browser processes a test starts: a process that ended is
// counted through its parent's reaped-children time), so other work on the machine does not enter it.
// `node dist/test/suites/file-times.js` prints the tables.
import { readFileSync, readdirSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import Mocha from 'mocha';
import { ROOT } from './suites';

/** One file's figures. */
export interface FileTime {
  file: string;
  wallSeconds: number;
  /** CPU seconds of the test process and every process under it while the file ran (all cores). */
  cpuSeconds: number;
  tests: number;
  failed: number;
}

/** Linux's clock ticks per second for /proc's times (USER_HZ). */
const TICKS = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime, in ticks: its own time and that of the children it reaped. */
  ticks: number;
}

function procStat(pid: string): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (2nd field) may hold spaces: the fields after it start past its closing ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
    return { pid: Number(pid), ppid: Number(fields[1]), ticks: utime + stime + cutime + cstime };
  } catch {
    return undefined; // gone, or no /proc
  }
}

/** CPU seconds of this process and all its live descendants, each with the children it reaped. */
export function treeCpuSeconds(root = process.pid): number {
  let stats: ProcStat[];
  try {
    stats = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .flatMap((pid) => procStat(pid) ?? []);
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  }
  const children = new Map<number, ProcStat[]>();
  for (const stat of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
  let ticks = 0;
  const walk = (stat: ProcStat): void => {
    ticks += stat.ticks;
    for (const child of children.get(stat.pid) ?? []) walk(child);
  };
  const self = stats.find((stat) => stat.pid === root);
  if (self) walk(self);
  return ticks / TICKS;
}

export default class FileTimesReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
    super(runner, options);
    const times: FileTime[] = [];
    let current: (FileTime & { wallStart: number; cpuStart: number }) | undefined;
    const close = (): void => {
      if (!current) return;
      current.wallSeconds = (performance.now() - current.wallStart) / 1000;
      current.cpuSeconds = treeCpuSeconds() - current.cpuStart;
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
      const started = { wallStart: performance.now(), cpuStart: treeCpuSeconds() };
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
