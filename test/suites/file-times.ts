// Prints the tables the file-times reporter wrote (test-artifacts/file-times/*.json), slowest first, as
// the Markdown kept in docs/working-on-the-package.md: `node dist/test/suites/file-times.js [suite ...]`.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FileTime } from './file-times-reporter';
import { ROOT } from './suites';

const FOLDER = join(ROOT, 'test-artifacts', 'file-times');

function table(suite: string, times: FileTime[]): string {
  const rows = [...times].sort((a, b) => b.wallSeconds - a.wallSeconds);
  const wall = rows.reduce((sum, row) => sum + row.wallSeconds, 0);
  const cpu = rows.reduce((sum, row) => sum + row.cpuSeconds, 0);
  const lines = [
    `### ${suite}: ${rows.length} files, ${(wall / 60).toFixed(1)} min by the clock, ${(cpu / 60).toFixed(1)} min of CPU`,
    '',
    '| file | tests | wall s | CPU s | cores used |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (row) =>
        `| ${row.file} | ${row.tests}${row.failed ? ` (${row.failed} failed)` : ''} | ${row.wallSeconds.toFixed(1)} | ${row.cpuSeconds.toFixed(1)} | ${(row.cpuSeconds / Math.max(row.wallSeconds, 0.001)).toFixed(2)} |`,
    ),
  ];
  return lines.join('\n');
}

function main(): void {
  const named = process.argv.slice(2);
  const suites = named.length
    ? named
    : existsSync(FOLDER)
      ? readdirSync(FOLDER)
          .filter((name) => name.endsWith('.json'))
          .map((name) => name.slice(0, -'.json'.length))
      : [];
  if (!suites.length) console.error(`no tables in ${FOLDER}: run a suite first`);
  for (const suite of suites) {
    const times = JSON.parse(readFileSync(join(FOLDER, `${suite}.json`), 'utf8')) as FileTime[];
    console.log(`${table(suite, times)}\n`);
  }
}

main();
