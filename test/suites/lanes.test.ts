// How lanes.ts cuts a suite into mocha processes and which may run together: every file once, a serial
// group in one process in its order, a long file alone, short ones batched, a file that runs alone first
// and with only light jobs beside it, then the longest first; and the kept lists name real files.
import assert from 'node:assert/strict';
import { LIGHT_CORES, mayStart, planJobs, readCosts, UNMEASURED, type FileCost, type Job } from './lanes';
import { ALONE_TESTS, SERIAL_GROUPS, allTests } from './suites';

const cost = (wall: number, cores = 0.5): FileCost => ({ wall, cpu: wall * cores });

describe('test lanes: the plan of jobs', function () {
  const costs: Record<string, FileCost> = {
    'a.ts': cost(50),
    'b.ts': cost(5),
    'c.ts': cost(8),
    'd.ts': cost(12),
    'g1.ts': cost(30),
    'g2.ts': cost(40),
    'paced.ts': cost(15),
  };
  const files = ['a.ts', 'b.ts', 'c.ts', 'd.ts', 'e.ts', 'g1.ts', 'g2.ts', 'paced.ts'];
  const jobs = planJobs(files, costs, {
    serialGroups: [['g2.ts', 'g1.ts', 'absent.ts']],
    alone: ['paced.ts'],
    batchSeconds: 20,
  });
  const of = (file: string) => jobs.find((job) => job.files.includes(file))!;

  it('runs every file once', () => {
    assert.deepEqual(jobs.flatMap((job) => job.files).sort(), [...files].sort());
  });

  it("runs a serial group's files in one job, in the group's order, leaving out files not in the suite", () => {
    assert.deepEqual(of('g1.ts').files, ['g2.ts', 'g1.ts']);
  });

  it('runs a file of at least the batch time in a job of its own, and batches shorter ones up to it', () => {
    assert.deepEqual(of('a.ts').files, ['a.ts']);
    for (const job of jobs.filter((job) => job.files.length > 1 && !job.files.includes('g1.ts')))
      assert.ok(job.seconds <= 20, `${job.files.join(', ')}: ${job.seconds} s in one batch`);
  });

  it('takes a file not measured at the unmeasured cost', () => {
    const batch = of('e.ts');
    const expected = batch.files.reduce((sum, file) => sum + (costs[file] ?? UNMEASURED).wall, 0);
    assert.equal(batch.seconds, expected);
  });

  it('puts a file that runs alone in a job of its own, first, then the others longest first', () => {
    assert.deepEqual(jobs[0], { files: ['paced.ts'], seconds: 15, cores: 0.5, alone: true });
    const seconds = jobs.slice(1).map((job) => job.seconds);
    assert.deepEqual(
      seconds,
      [...seconds].sort((x, y) => y - x),
    );
    assert.deepEqual(jobs[1].files, ['g2.ts', 'g1.ts']);
  });

  it('starts a job that runs alone only beside light jobs, and beside it only light ones', () => {
    const job = (cores: number, alone = false): Job => ({ files: ['x.ts'], seconds: 10, cores, alone });
    const light = job(LIGHT_CORES);
    const heavy = job(0.6);
    const paced = job(0.5, true);
    assert.equal(mayStart(paced, []), true);
    assert.equal(mayStart(paced, [light, light]), true);
    assert.equal(mayStart(paced, [light, heavy]), false);
    assert.equal(mayStart(job(0.5, true), [paced]), false, 'two that run alone never run together');
    assert.equal(mayStart(light, [paced]), true);
    assert.equal(mayStart(heavy, [paced]), false);
    assert.equal(mayStart(heavy, [heavy, light]), true);
  });

  it('keeps costs, serial groups and files that run alone of test files that exist', () => {
    const existing = new Set(allTests());
    for (const suite of ['rest', 'node-red-5']) {
      const unknown = Object.keys(readCosts(suite)).filter((file) => !existing.has(file));
      assert.deepEqual(
        unknown,
        [],
        `${suite}: costs of files that are gone (node dist/test/suites/file-times.js --save)`,
      );
    }
    assert.deepEqual(
      [...SERIAL_GROUPS.flat(), ...ALONE_TESTS].filter((file) => !existing.has(file)),
      [],
    );
  });
});
