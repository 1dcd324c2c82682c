// Prints the tables the file-times reporter wrote (test-artifacts/file-times/*.json), slowest first, as
// the Markdown kept in docs/working-on-the-package.md: `node dist/test/suites/file-times.js [suite ...]`.
// With --save it also keeps the rest and Node-RED 5 tables' figures in test/suites/file-costs.json,
// which lanes.ts plans its jobs from: save after a whole `npm test` that passed.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileTime } from './file-times-reporter';
import type { FileCost } from './lanes';
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

/** The suites whose costs lanes.ts plans from. */
const PLANNED = ['rest', 'node-red-5'];

function save(tables: Map<string, FileTime[]>): void {
  const costs: Record<string, Record<string, FileCost>> = {};
  for (const suite of PLANNED) {
    const times = tables.get(suite);
    if (!times) continue;
    const round = (seconds: number) => Math.round(seconds * 10) / 10;
    const sorted = [...times].sort((a, b) => a.file.localeCompare(b.file));
    costs[suite] = Object.fromEntries(
      sorted.map((time) => [time.file, { wall: round(time.wallSeconds), cpu: round(time.cpuSeconds) }]),
    );
  }
  const path = join(ROOT, 'test', 'suites', 'file-costs.json');
  writeFileSync(path, `${JSON.stringify(costs, null, 2)}\n`);
  console.log(`kept the costs of ${Object.keys(costs).join(', ')} in ${path}`);
}

function main(): void {
  const saving = process.argv.includes('--save');
  const named = process.argv.slice(2).filter((arg) => arg !== '--save');
  const suites = named.length
    ? named
    : existsSync(FOLDER)
      ? readdirSync(FOLDER)
          .filter((name) => name.endsWith('.json'))
          .map((name) => name.slice(0, -'.json'.length))
      : [];
  if (!suites.length) console.error(`no tables in ${FOLDER}: run a suite first`);
  const tables = new Map<string, FileTime[]>();
  for (const suite of suites) {
    const times = JSON.parse(readFileSync(join(FOLDER, `${suite}.json`), 'utf8')) as FileTime[];
    tables.set(suite, times);
    console.log(`${table(suite, times)}\n`);
  }
  if (saving) save(tables);
}

main();
