// The soak's summary: one markdown section, printed at the end and written into bench/RESULTS.md under
// "## Soak" (replacing the last run's, leaving the other sections as they are), and whether the goal was met.
import { readFileSync, writeFileSync } from 'node:fs';
import { replaceSection } from './results-sections';
import type { ChaosEvent, Tally } from './soak-account';
import type { EngineAnswers } from './soak-engine';
import type { ProcessSample } from './soak-probe';
import type { LoudnessCheck, LoudnessVerdict, OutputCheck } from './soak-verify';

export const SOAK_HEADING = 'Soak';

export interface SoakResult {
  startedAt: Date;
  /** Wall clock of the whole run, seconds. */
  seconds: number;
  setup: string[];
  events: ChaosEvent[];
  tally: Tally;
  answers: EngineAnswers;
  outputChecks: OutputCheck[];
  /** Every checked output, by the engine's own figures. */
  engineLoudness: Array<{ input: string; kind: string; verdict: LoudnessVerdict }>;
  /** ffmpeg on a sample of them. */
  loudness: LoudnessCheck[];
  tempFiles: string[];
  keyFoundIn: string[];
  brokenRecordLines: number;
  samples: ProcessSample[];
  /** Why the run stopped waiting for outcomes. */
  drained: string;
}

/**
 * What keeps the goal from being met (empty: met): nothing lost, hung, sent twice or left behind, every
 * output the input's, every failure explained, the key nowhere. Loudness is reported beside it: the
 * engine's processing, not its reliability.
 */
export function unmetGoals(r: SoakResult): string[] {
  const unexplained = [...r.tally.failuresByCause]
    .filter(([cause]) => cause.endsWith('unexplained'))
    .reduce((n, [, f]) => n + f.length, 0);
  const bad = r.outputChecks.filter((c) => c.problems.length > 0).length;
  const goals: Array<[number, string]> = [
    [r.tally.lost.length, 'inputs lost'],
    [r.tally.hung.length, 'media hung'],
    [r.tally.duplicated.length, 'inputs sent on twice'],
    [r.tempFiles.length, 'temporary files left'],
    [bad, 'outputs that do not match their input'],
    [unexplained, 'failures not explained by an injected fault or a restart'],
    [r.keyFoundIn.length, 'places the API key was found in'],
  ];
  return goals.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
}

const clock = (ms: number) => `${Math.floor(ms / 60_000)}:${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}`;
const row = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
const table = (head: string[], rows: Array<Array<string | number>>) => [
  row(head),
  row(head.map(() => '---')),
  ...rows.map(row),
];

export function soakSection(r: SoakResult): string {
  const t = r.tally;
  const t0 = r.startedAt.getTime();
  const unmet = unmetGoals(r);
  const verified = r.outputChecks.filter((c) => c.problems.length === 0).length;
  const failedCount = [...t.failuresByCause.values()].reduce((n, f) => n + f.length, 0);
  const onTarget = r.engineLoudness.filter((l) => l.verdict === 'on target').length;
  const held = r.engineLoudness.filter((l) => l.verdict.startsWith('below target, held')).length;
  const largest = (values: number[]) => (values.length ? Math.max(...values).toFixed(2) : '-');
  const agreeLufs = largest(r.loudness.map((l) => Math.abs(l.ffmpeg.integratedLufs - l.engine.loudnessLufs)));
  const agreePeak = largest(r.loudness.map((l) => Math.abs(l.ffmpeg.truePeakDbtp - l.engine.truePeakDbtp)));
  const out: string[] = [
    `## ${SOAK_HEADING}`,
    '',
    `\`npm run soak\`, ${r.startedAt.toISOString()}, ${Math.round(r.seconds)} s in all. ${r.setup.join(' ')}`,
    '',
    unmet.length === 0
      ? '**Goal met**: nothing lost, hung, sent twice or left behind; every output matches its input.'
      : `**Goal not met**: ${unmet.join(', ')}.`,
    '',
    ...table(
      ['measure', 'count'],
      [
        ['inputs dropped into inbox/', t.dropped],
        ['media the engine accepted (201; from its data dir)', t.accepted],
        ['inputs with an output (recorded by the flow)', t.withOutput],
        [
          "outputs checked: original = input (sha256), enhanced a complete WAV of the input's rate, channels and frames",
          `${verified} of ${r.outputChecks.length}`,
        ],
        [
          "outputs at -16 LUFS (+-1) / below it, held at the -1 dBTP ceiling / neither (the engine's figures; see Loudness)",
          `${onTarget} / ${held} / ${r.engineLoudness.length - onTarget - held}`,
        ],
        [
          `ffmpeg (ebur128=peak=true) on ${r.loudness.length} of them: largest difference from the engine's figures, integrated / true peak`,
          `${agreeLufs} LU / ${agreePeak} dB`,
        ],
        ['inputs failed at the Catch node (with a code)', `${t.failed} (${failedCount} failure records)`],
        ['**lost**: inputs with neither output nor failure', t.lost.length],
        ['**hung**: accepted media whose input has neither output nor failure', t.hung.length],
        ['**sent twice**: inputs with more than one output', t.duplicated.length],
        ['inputs with an output and a failure', t.outputAndFailure.length],
        ['orphaned media: accepted, no record names them, the input has an outcome', t.orphaned.length],
        ['**left behind**: .part / .tmp files in outbox/ and the user dir', r.tempFiles.length],
        ['record lines cut short (Node-RED killed mid-write)', r.brokenRecordLines],
        ['engine media FAILED: injected / other', `${t.engineFailedInjected} / ${t.engineFailedOther.length}`],
        [
          'API key found in flows.json, the logs or the records',
          r.keyFoundIn.length ? r.keyFoundIn.join(', ') : 'nowhere',
        ],
      ],
    ),
    '',
    `Outcomes stopped changing: ${r.drained}.`,
    '',
    'What happened during the run (times from the start of the run):',
    '',
    ...table(
      ['at', 'event', 'back after'],
      r.events.map((e) => [clock(e.at - t0), e.name, `${((e.backAt - e.at) / 1000).toFixed(1)} s`]),
    ),
    '',
    'Failures at the Catch node, by code and cause:',
    '',
    ...table(
      ['code', 'cause', 'count', 'example message'],
      [...t.failuresByCause]
        .sort((a, b) => b[1].length - a[1].length)
        .map(([key, list]) => {
          const [code, cause] = key.split(' | ');
          return [
            code,
            cause,
            list.length,
            `\`${list[0].message.replace(/\|/g, '/').replace(/\s+/g, ' ').slice(0, 140)}\``,
          ];
        }),
    ),
  ];
  if (t.lost.length > 0) {
    const byEvent = new Map<string, typeof t.lost>();
    for (const l of t.lost) byEvent.set(l.during, [...(byEvent.get(l.during) ?? []), l]);
    out.push(
      '',
      'Lost inputs, by the first deploy or restart of Node-RED after their last sign of life (dropped, or their media last asked about):',
      '',
    );
    out.push(
      ...table(
        ['disturbance', 'lost', 'file left in', 'accepted by the engine', 'examples'],
        [...byEvent].map(([during, list]) => {
          const left = countBy(list.map((l) => l.left));
          const media = list.filter((l) => l.media.length > 0);
          const states = countBy(media.flatMap((l) => l.media.map((m) => m.split(' ')[1])));
          return [
            during,
            list.length,
            left,
            `${media.length}${states ? ` (${states})` : ''}`,
            list
              .slice(0, 3)
              .map((l) => l.input)
              .join(', '),
          ];
        }),
      ),
    );
  }
  if (t.orphaned.length > 0) {
    out.push(
      '',
      'Orphaned media:',
      '',
      ...t.orphaned.slice(0, 5).map((o) => `- ${o.media.fileName} (${o.media.uid}, ${o.media.status}): ${o.why}`),
    );
  }
  const bad = r.outputChecks.filter((c) => c.problems.length > 0);
  if (bad.length > 0)
    out.push(
      '',
      'Outputs that do not match their input:',
      '',
      ...bad.slice(0, 10).map((c) => `- ${c.input}: ${c.problems.join('; ')}`),
    );
  if (r.tempFiles.length > 0)
    out.push(
      '',
      `Left behind: ${r.tempFiles
        .slice(0, 10)
        .map((f) => `\`${f}\``)
        .join(', ')}${r.tempFiles.length > 10 ? ', ...' : ''}`,
    );
  if (t.engineFailedOther.length > 0)
    out.push(
      '',
      'Engine media FAILED without an injected fault:',
      '',
      ...t.engineFailedOther.slice(0, 5).map((m) => `- ${m.fileName}: ${m.error?.code} ${m.error?.message}`),
    );
  out.push(
    '',
    'Loudness of the outputs by kind of input, as the engine measured them (target -16 LUFS, ceiling -1 dBTP):',
    '',
    ...loudnessTable(r.engineLoudness),
  );
  out.push(
    '',
    "- ffmpeg's true peak is read from its per-frame values, which leave out the end of a file (the oversampler's tail): a file that ends at a high level reads lower there than in ffmpeg's own summary or the engine's meter.",
  );
  const offSample = r.loudness.filter((l) => l.verdict !== 'on target').slice(0, 5);
  if (offSample.length > 0) {
    out.push('', 'Sampled outputs not on target, ffmpeg beside the engine:', '');
    out.push(
      ...offSample.map(
        (l) =>
          `- ${l.input}: ffmpeg ${l.ffmpeg.integratedLufs.toFixed(2)} LUFS, ${l.ffmpeg.truePeakDbtp.toFixed(2)} dBTP; engine ${l.engine.loudnessLufs} LUFS, ${l.engine.truePeakDbtp} dBTP, limiter ${l.engine.limiterReductionDb} dB (${l.verdict})`,
      ),
    );
  }
  out.push(
    '',
    `Engine answers (its access logs, both runs of it); of the 429s, ${r.answers.forced429} forced (the first answers after each start) and ${r.answers.real429} from the limits:`,
    '',
    ...answersTable(r.answers.counts),
  );
  out.push(
    '',
    'The Node-RED process (/proc/<pid>/status VmRSS, /proc/<pid>/fd):',
    '',
    ...table(
      ['when', 'pid', 'RSS', 'open fds'],
      r.samples.map((s) => [s.label, s.pid, `${s.rssMiB} MiB`, s.openFds]),
    ),
  );
  return out.join('\n');
}

function answersTable(answers: Map<string, number>): string[] {
  const operations = ['upload', 'metadata', 'download'];
  const statuses = [...new Set([...answers.keys()].map((k) => k.split(' ')[2]))].sort();
  return table(
    ['operation', ...statuses],
    operations.map((op) => {
      const method = op === 'upload' ? 'POST' : 'GET';
      return [op, ...statuses.map((s) => answers.get(`${method} ${op} ${s}`) ?? 0)];
    }),
  );
}

function loudnessTable(rows: SoakResult['engineLoudness']): string[] {
  const verdicts: LoudnessVerdict[] = [
    'on target',
    'below target, held at the true-peak ceiling',
    'off target',
    'true peak above the ceiling',
  ];
  const kinds = [...new Set(rows.map((l) => l.kind))];
  return table(
    ['input', 'outputs', ...verdicts],
    kinds.map((kind) => {
      const ofKind = rows.filter((l) => l.kind === kind);
      return [kind, ofKind.length, ...verdicts.map((v) => ofKind.filter((l) => l.verdict === v).length)];
    }),
  );
}

function countBy(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v} ${n}`).join(', ');
}

/** Replaces the soak's section of bench/RESULTS.md. */
export function writeSoakSection(resultsFile: string, section: string): void {
  const current = readFileSync(resultsFile, 'utf8');
  writeFileSync(resultsFile, replaceSection(current, SOAK_HEADING, section));
}
