// How lanes.ts cuts a suite into mocha processes: every file once, a serial group in one process in its
// order, a long file alone, short ones batched, the longest first; and the kept costs name real files.
import assert from 'node:assert/strict';
import { planJobs, readCosts, UNMEASURED, type FileCost } from './lanes';
import { SERIAL_GROUPS, allTests } from './suites';

const cost = (wall: number): FileCost => ({ wall, cpu: wall / 2 });

describe('test lanes: the plan of jobs', function () {
  const costs = {
    'a.ts': cost(50),
    'b.ts': cost(5),
    'c.ts': cost(8),
    'd.ts': cost(12),
    'g1.ts': cost(30),
    'g2.ts': cost(40),
  };
  const files = ['a.ts', 'b.ts', 'c.ts', 'd.ts', 'e.ts', 'g1.ts', 'g2.ts'];
  const jobs = planJobs(files, costs, [['g2.ts', 'g1.ts', 'absent.ts']], 20);

  it('runs every file once', () => {
    assert.deepEqual(jobs.flatMap((job) => job.files).sort(), [...files].sort());
  });

  it("runs a serial group's files in one job, in the group's order, leaving out files not in the suite", () => {
    assert.deepEqual(jobs.find((job) => job.files.includes('g1.ts'))?.files, ['g2.ts', 'g1.ts']);
  });

  it('runs a file of at least the batch time alone, and batches shorter ones up to it', () => {
    assert.deepEqual(jobs.find((job) => job.files.includes('a.ts'))?.files, ['a.ts']);
    for (const job of jobs.filter((job) => job.files.length > 1 && !job.files.includes('g1.ts')))
      assert.ok(job.seconds <= 20, `${job.files.join(', ')}: ${job.seconds} s in one batch`);
  });

  it('takes a file not measured at the unmeasured cost', () => {
    const batch = jobs.find((job) => job.files.includes('e.ts'))!;
    const expected = batch.files.reduce((sum, file) => sum + (costs[file as keyof typeof costs] ?? UNMEASURED).wall, 0);
    assert.equal(batch.seconds, expected);
  });

  it('orders the jobs longest first', () => {
    const seconds = jobs.map((job) => job.seconds);
    assert.deepEqual(
      seconds,
      [...seconds].sort((x, y) => y - x),
    );
    assert.deepEqual(jobs[0].files, ['g2.ts', 'g1.ts']);
  });

  it('keeps costs and serial groups of test files that exist', () => {
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
      SERIAL_GROUPS.flat().filter((file) => !existing.has(file)),
      [],
    );
  });
});
