// npm run soak:deploys: the short soak with full deploys only (bench/soak.ts with SOAK_DISTURBANCES=deploys:
// 100 WAVs over 120 s, four full deploys, each with a batch dropped 1.5 s before it), five times in a row,
// stopping at the first run that loses, hangs, sends twice or leaves anything behind. Each run's summary line
// and the verdict go to bench/RESULTS.md ("## Soak, full deploys"); the exit code is the first failed run's.
//
// Environment: SOAK_RUNS (default 5); SOAK_MEDIA and SOAK_DROP_SECONDS as for the soak (default 100, 120).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { replaceSection } from './results-sections';

const ROOT = join(__dirname, '..', '..');
const HEADING = 'Soak, full deploys';
const RUNS = Number(process.env.SOAK_RUNS ?? 5);
const env = {
  ...process.env,
  SOAK_DISTURBANCES: 'deploys',
  SOAK_MEDIA: process.env.SOAK_MEDIA ?? '100',
  SOAK_DROP_SECONDS: process.env.SOAK_DROP_SECONDS ?? '120',
};

interface RunOutcome {
  code: number;
  seconds: number;
  /** The soak's table rows that say what was lost or left: "| **lost**: ... | 0 |". */
  counts: string[];
}

function soakOnce(): Promise<RunOutcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(__dirname, 'soak.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      process.stdout.write(chunk);
    });
    child.on('exit', (code) =>
      resolve({
        code: code ?? 1,
        seconds: (Date.now() - started) / 1000,
        counts: out
          .split('\n')
          .filter((line) =>
            /^\| (\*\*(lost|hung|sent twice|left behind)\*\*|media the engine accepted|inputs with an output \(|inputs failed)/.test(
              line,
            ),
          ),
      }),
    );
  });
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const runs: RunOutcome[] = [];
  for (let i = 1; i <= RUNS; i++) {
    process.stderr.write(`\n== soak with full deploys, run ${i} of ${RUNS}\n`);
    const outcome = await soakOnce();
    runs.push(outcome);
    if (outcome.code !== 0) break;
  }
  const cell = (line: string) =>
    line
      .split('|')
      .map((c) => c.trim())
      .filter(Boolean)
      .pop() ?? '';
  const failed = runs.findIndex((run) => run.code !== 0);
  const section = [
    `## ${HEADING}`,
    '',
    `\`npm run soak:deploys\`, ${startedAt.toISOString()}: the short soak (${env.SOAK_MEDIA} WAVs over ${env.SOAK_DROP_SECONDS} s, four full deploys and no kill, each deploy with a batch dropped 1.5 s before it) ${RUNS} times in a row.`,
    '',
    failed < 0
      ? `**Goal met** in all ${RUNS} runs: nothing lost, hung, sent twice or left behind.`
      : `**Goal not met** in run ${failed + 1} (exit ${runs[failed].code}); the runs stop there.`,
    '',
    '| run | seconds | accepted | with an output | failed (with a code) | lost | hung | sent twice | left behind | exit |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...runs.map(
      (run, i) => `| ${i + 1} | ${Math.round(run.seconds)} | ${run.counts.map(cell).join(' | ')} | ${run.code} |`,
    ),
  ].join('\n');
  const results = join(ROOT, 'bench', 'RESULTS.md');
  writeFileSync(results, replaceSection(readFileSync(results, 'utf8'), HEADING, section));
  process.stdout.write(`\n${section}\n`);
  return failed < 0 ? 0 : runs[failed].code;
}

void main().then((code) => process.exit(code));
