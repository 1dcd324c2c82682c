// Runs every benchmark in bench/ (files named *.bench.ts) and prints one markdown table per benchmark.
// The tables are also written to bench/RESULTS.md, which the README links to.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import os from 'node:os';
import { readSection, replaceSection } from './results-sections';
import { SOAK_HEADING } from './soak-report';

export interface BenchReport {
  title: string;
  /** First row is the header. */
  table: string[][];
  notes?: string[];
  /** A run of this benchmark alone (`npm run bench -- <name>`) replaces its section in bench/RESULTS.md. */
  writtenAlone?: boolean;
}

function markdown(report: BenchReport): string {
  const [head, ...rows] = report.table;
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const out = [`## ${report.title}`, '', line(head), line(head.map(() => '---')), ...rows.map(line)];
  if (report.notes?.length) out.push('', ...report.notes.map((n) => `- ${n}`));
  return out.join('\n');
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const files = readdirSync(__dirname)
    .filter((f) => f.endsWith('.bench.js'))
    .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
    .sort();
  const sections = [
    `# Benchmark results`,
    '',
    `Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), ${new Date().toISOString()}.`,
    'Every figure is a ratio against a reference measured in the same run.',
  ];
  const results = join(__dirname, '..', '..', 'bench', 'RESULTS.md');
  const alone: BenchReport[] = [];
  for (const file of files) {
    const mod = (await import(join(__dirname, file))) as { run: () => Promise<BenchReport> };
    console.error(`running ${file} ...`);
    const started = Date.now();
    const report = await mod.run();
    console.error(`${file}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    const text = markdown(report);
    console.log(`${text}\n`);
    sections.push('', text);
    if (report.writtenAlone) alone.push(report);
  }
  // A full run replaces the results the README links to; a filtered one only the sections whose benchmark
  // says its run alone stands on its own (the others carry notes written by hand around a run alone).
  // The soak's section is its own run's (npm run soak).
  if (only.length > 0) {
    let text = readFileSync(results, 'utf8');
    for (const report of alone) text = replaceSection(text, report.title, markdown(report));
    if (alone.length > 0) writeFileSync(results, text);
  } else {
    const soak = readSection(readFileSync(results, 'utf8'), SOAK_HEADING);
    if (soak) sections.push('', soak);
    writeFileSync(results, `${sections.join('\n')}\n`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
