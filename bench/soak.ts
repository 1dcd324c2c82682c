// npm run soak: did we lose anything? 300 small media dropped into a folder that a real Node-RED (the
// packed package installed in it) watches and sends through upload -> wait -> download to a remote engine
// (the package's CLI in its own process, with faults on), while the flows are fully redeployed twice and
// Node-RED and the engine are each killed (-9) and started again. Then every input is accounted for:
// an output that matches it, a failure with a code at the Catch node, or lost. The summary is printed and
// written to bench/RESULTS.md ("## Soak"); the exit code is 1 when anything was lost, hung, sent twice,
// left behind or wrong. Everything listens on loopback; the whole run is bounded to 15 minutes.
//
// Environment: SOAK_MEDIA (default 300), SOAK_DROP_SECONDS (default 360), SOAK_KEEP=1 keeps its folder;
// SOAK_DISTURBANCES=deploys: four full deploys and no kill (the short soak that npm run soak:deploys
// repeats, bench/soak-deploys.ts), its summary printed and not written to bench/RESULTS.md.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../test/fixtures/node-red-process';
import { freePort } from '../test/fixtures/free-port';
import { tally, type ChaosEvent } from './soak-account';
import { deployFull, hasCredential } from './soak-admin';
import {
  countAnswers,
  ENGINE_FAULTS,
  ENGINE_LIMITS,
  lastRequests,
  readAcceptedMedia,
  startEngineProcess,
  type EngineSetup,
} from './soak-engine';
import {
  CONFIG_ID,
  CONFIG_TYPE,
  FAILURES_FILE,
  OUTPUTS_FILE,
  soakFlow,
  WAIT_TIMEOUT_S,
  type SoakFolders,
} from './soak-flow';
import { filesContaining, findTempFiles, namesIn } from './soak-leftovers';
import { dropInput, makeInputs, type SoakInput } from './soak-media';
import { installNodeRed, startNodeRed, type NodeRedSetup } from './soak-node-red';
import { sampleProcess, type ProcessSample } from './soak-probe';
import { killAll, type RunningProcess } from './soak-processes';
import { readRecords, type FailureRecord, type OutputRecord } from './soak-records';
import { soakSection, unmetGoals, writeSoakSection, type SoakResult } from './soak-report';
import {
  checkLoudness,
  checkOutput,
  ENGINE_TRUE_PEAK_TOLERANCE_DB,
  loudnessVerdict,
  type LoudnessCheck,
  type OutputCheck,
} from './soak-verify';

const MEDIA = Number(process.env.SOAK_MEDIA ?? 300);
const DROP_MS = Number(process.env.SOAK_DROP_SECONDS ?? 360) * 1000;
const KEEP = process.env.SOAK_KEEP === '1';
const RUN_LIMIT_MS = 15 * 60_000;
/** Kept for stopping, checking the outputs and writing the summary. */
const FINISH_RESERVE_MS = 2 * 60_000;
/** Outcomes unchanged this long, with nothing in progress at the engine: nothing more will come. */
const QUIET_MS = 60_000;
/** How long a killed process stays down before it is started again, as a service manager would. */
const DOWNTIME_MS = 3_000;
const LOUDNESS_SAMPLE = 30;
/** When the disturbances happen, as fractions of the drops. */
const DEPLOY_1 = 0.2;
const ENGINE_RESTART = 0.4;
const NODE_RED_RESTART = 0.6;
const DEPLOY_2 = 0.8;
/** Full deploys only, at each of those moments: a message in flight at a deploy is the risk under test. */
const DEPLOYS_ONLY = process.env.SOAK_DISTURBANCES === 'deploys';
const DEPLOYS_ONLY_AT = [DEPLOY_1, ENGINE_RESTART, NODE_RED_RESTART, DEPLOY_2];
/**
 * A folder of this many files copied in at once: at the start, and where a new client of the flow (after
 * a deploy or a restart of Node-RED) finds them all at once, before it has learnt the engine's counts:
 * just before each deploy (the 2 s settle is cut short, and the sweep after it takes them) and while
 * Node-RED is down.
 */
const BATCH = 30;
const BATCHES_AT_MS = DEPLOYS_ONLY
  ? [0, ...DEPLOYS_ONLY_AT.map((at) => at * DROP_MS - 1_500)]
  : [0, DEPLOY_1 * DROP_MS - 1_500, NODE_RED_RESTART * DROP_MS + 1_000, DEPLOY_2 * DROP_MS - 1_500];

const DISTURBANCES = DEPLOYS_ONLY
  ? `${DEPLOYS_ONLY_AT.length} full deploys and no kill`
  : 'two full deploys and a kill -9 of the engine and of Node-RED';

const t0 = Date.now();
const say = (line: string) => {
  const s = Math.floor((Date.now() - t0) / 1000);
  process.stderr.write(`[${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}] ${line}\n`);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
// Inside the repository: the unpacked package finds its dependencies in the repository's node_modules.
const root = mkdtempSync(join(ROOT, 'test-artifacts', 'soak-'));
const cleanUp = () => {
  killAll();
  if (KEEP) process.stderr.write(`soak files kept in ${root}\n`);
  else rmSync(root, { recursive: true, force: true });
};
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping`);
    cleanUp();
    process.exit(130);
  });
}

interface Run {
  folders: SoakFolders;
  logs: string;
  nodeRed: NodeRedSetup;
  engine: EngineSetup;
  engineUrl: string;
  engineProcess: RunningProcess;
  nodeRedProcess: RunningProcess;
  events: ChaosEvent[];
  samples: ProcessSample[];
  droppedAt: Map<string, number>;
  logFiles: Record<string, string>;
}

async function sample(run: Run, label: string): Promise<void> {
  const s = await sampleProcess(run.nodeRedProcess.pid, label);
  if (s) run.samples.push(s);
}

/** Runs `action` as a named disturbance and records when the system was back. */
async function disturb(run: Run, name: string, action: () => Promise<void>): Promise<void> {
  const at = Date.now();
  say(`${name} ...`);
  await action();
  run.events.push({ name, at, backAt: Date.now() });
  say(`${name}: back after ${((Date.now() - at) / 1000).toFixed(1)} s`);
}

async function restartEngine(run: Run): Promise<void> {
  await run.engineProcess.crash();
  await sleep(DOWNTIME_MS);
  const log = join(run.logs, 'engine-2.log');
  run.logFiles['engine log (after its restart)'] = log;
  // The port is the same; should the system still hold it a moment, try again shortly.
  for (let attempt = 1; ; attempt++) {
    try {
      run.engineProcess = await startEngineProcess(run.engine, log);
      return;
    } catch (err) {
      if (attempt >= 5) throw err;
      await sleep(1_000);
    }
  }
}

async function restartNodeRed(run: Run): Promise<void> {
  await sample(run, 'before its kill -9');
  await run.nodeRedProcess.crash();
  await sleep(DOWNTIME_MS);
  const log = join(run.logs, 'node-red-2.log');
  run.logFiles['Node-RED log (after its restart)'] = log;
  run.nodeRedProcess = await startNodeRed(run.nodeRed, log);
}

async function redeploy(run: Run): Promise<void> {
  // As the editor's Deploy (full) sends it: the flow without the key, which Node-RED keeps.
  await deployFull(run.nodeRed.baseUrl, soakFlow(run.folders, run.engineUrl));
  if (!(await hasCredential(run.nodeRed.baseUrl, CONFIG_TYPE, CONFIG_ID, 'apiKey')))
    throw new Error('the config node lost its API key in a full deploy');
}

/**
 * When each input is dropped: bursts of 1 to 5 files spread over DROP_MS, and the batches.
 */
function dropPlan(inputs: SoakInput[]): Array<{ at: number; inputs: SoakInput[] }> {
  const batch = Math.min(BATCH, Math.floor(inputs.length / 10));
  const slots = BATCHES_AT_MS.map((at) => ({ at, size: batch }));
  const rest = inputs.length - batch * BATCHES_AT_MS.length;
  const small: number[] = [];
  for (let n = 0; n < rest; n += small[small.length - 1]) small.push(Math.min(1 + (small.length % 5), rest - n));
  small.forEach((size, k) => slots.push({ at: (k * DROP_MS) / small.length, size }));
  slots.sort((a, b) => a.at - b.at);
  let next = 0;
  return slots.map(({ at, size }) => ({ at, inputs: inputs.slice(next, (next += size)) }));
}

/** Drops the inputs as planned, while the disturbances happen on their own schedule. */
async function dropAndDisturb(run: Run, inputs: SoakInput[]): Promise<void> {
  const start = Date.now();
  const drops = (async () => {
    for (const burst of dropPlan(inputs)) {
      await sleep(start + burst.at - Date.now());
      for (const input of burst.inputs) {
        await dropInput(input, run.folders.inbox);
        run.droppedAt.set(input.name, Date.now());
      }
    }
    say(`all ${inputs.length} inputs dropped`);
  })();
  const schedule: Array<[number, string, () => Promise<void>]> = DEPLOYS_ONLY
    ? DEPLOYS_ONLY_AT.map((at, i) => [at, `full deploy ${i + 1}`, () => redeploy(run)])
    : [
        [DEPLOY_1, 'full deploy 1', () => redeploy(run)],
        [ENGINE_RESTART, 'engine kill -9 and start', () => restartEngine(run)],
        [(ENGINE_RESTART + NODE_RED_RESTART) / 2, '', () => sample(run, 'middle')],
        [NODE_RED_RESTART, 'Node-RED kill -9 and start', () => restartNodeRed(run)],
        [DEPLOY_2, 'full deploy 2', () => redeploy(run)],
      ];
  const disturbances = (async () => {
    for (const [fraction, name, action] of schedule) {
      await sleep(start + fraction * DROP_MS - Date.now());
      if (name) await disturb(run, name, action);
      else await action();
    }
    await sleep(5_000);
    await sample(run, 'after its restart and the second deploy');
  })();
  await Promise.all([drops, disturbances]);
}

/** Waits until every dropped input has an outcome, or nothing changes any more, or time runs out. */
async function drain(run: Run, deadline: number): Promise<string> {
  let last = '';
  let lastChange = Date.now();
  for (;;) {
    const outputs = await readRecords<OutputRecord>(join(run.folders.records, OUTPUTS_FILE));
    const failures = await readRecords<FailureRecord>(join(run.folders.records, FAILURES_FILE));
    const media = await readAcceptedMedia(run.engine.dataDir);
    const done = new Set([...outputs.records.map((r) => r.input), ...failures.records.map((f) => f.input)]);
    const open = [...run.droppedAt.keys()].filter((name) => !done.has(name)).length;
    const inProgress = media.filter((m) => m.status === 'PENDING' || m.status === 'PROCESSING').length;
    if (open === 0) return 'every dropped input has an outcome';
    const state = [
      outputs.records.length,
      failures.records.length,
      media.length,
      inProgress,
      (await namesIn(run.folders.inbox)).size,
    ].join('/');
    if (state !== last) {
      last = state;
      lastChange = Date.now();
      say(
        `${open} inputs without an outcome yet (${outputs.records.length} outputs, ${failures.records.length} failures; engine: ${media.length} media, ${inProgress} in progress)`,
      );
    }
    if (inProgress === 0 && Date.now() - lastChange >= QUIET_MS)
      return `nothing changed for ${QUIET_MS / 1000} s with nothing in progress at the engine (${open} inputs without an outcome)`;
    if (Date.now() >= deadline) return `the time limit of the run was reached (${open} inputs without an outcome)`;
    await sleep(2_000);
  }
}

async function main(): Promise<number> {
  const startedAt = new Date(t0);
  // The run is bounded whatever happens: past the limit it stops everything and fails.
  setTimeout(() => {
    say(`the soak ran longer than ${RUN_LIMIT_MS / 60_000} minutes: stopping`);
    cleanUp();
    process.exit(2);
  }, RUN_LIMIT_MS).unref();

  const folders: SoakFolders = { inbox: '', work: '', done: '', failed: '', outbox: '', records: '' };
  for (const name of Object.keys(folders) as (keyof SoakFolders)[]) {
    folders[name] = join(root, name);
    mkdirSync(folders[name], { recursive: true });
  }
  const logs = join(root, 'logs');
  mkdirSync(logs);

  say(`making ${MEDIA} media ...`);
  const inputs = await makeInputs(MEDIA, join(root, 'staging'));
  say('packing the package and installing it into a Node-RED user dir ...');
  const nodeRed = await installNodeRed(join(root, 'node-red'), await freePort(), root);
  const engine: EngineSetup = {
    cliPath: join(nodeRed.installedPackage, 'dist', 'src', 'engine', 'cli.js'),
    port: await freePort(),
    dataDir: join(root, 'engine-data'),
    key: `soak-${randomBytes(18).toString('base64url')}`,
  };
  const logFiles: Record<string, string> = {
    'engine log': join(logs, 'engine-1.log'),
    'Node-RED log': join(logs, 'node-red-1.log'),
    'flows.json': join(nodeRed.userDir, 'flows.json'),
    'flows_cred.json (encrypted)': join(nodeRed.userDir, 'flows_cred.json'),
    'the output records': join(folders.records, OUTPUTS_FILE),
    'the failure records': join(folders.records, FAILURES_FILE),
  };
  say('starting the engine and Node-RED ...');
  const engineProcess = await startEngineProcess(engine, logFiles['engine log']);
  const nodeRedProcess = await startNodeRed(nodeRed, logFiles['Node-RED log']);
  const engineUrl = `http://127.0.0.1:${engine.port}`;
  const run: Run = {
    folders,
    logs,
    nodeRed,
    engine,
    engineUrl,
    engineProcess,
    nodeRedProcess,
    events: [],
    samples: [],
    droppedAt: new Map(),
    logFiles,
  };
  await deployFull(nodeRed.baseUrl, soakFlow(folders, engineUrl, engine.key));
  if (!(await hasCredential(nodeRed.baseUrl, CONFIG_TYPE, CONFIG_ID, 'apiKey')))
    throw new Error('the config node has no API key after the first deploy');
  await sleep(3_000);
  await sample(run, 'start (flows deployed, nothing dropped)');

  say(`dropping ${MEDIA} inputs over ${DROP_MS / 1000} s, with ${DISTURBANCES} ...`);
  await dropAndDisturb(run, inputs);
  const drained = await drain(run, t0 + RUN_LIMIT_MS - FINISH_RESERVE_MS);
  say(`drained: ${drained}`);
  await sample(run, 'end');
  const tempFiles = await findTempFiles([folders.outbox, nodeRed.userDir]);
  const leftIn = { inbox: await namesIn(folders.inbox), work: await namesIn(folders.work) };
  await run.nodeRedProcess.stop();
  await run.engineProcess.stop();

  say('checking the outputs ...');
  const outputs = await readRecords<OutputRecord>(join(folders.records, OUTPUTS_FILE));
  const failures = await readRecords<FailureRecord>(join(folders.records, FAILURES_FILE));
  const byName = new Map(inputs.map((i) => [i.name, i]));
  const outputChecks: OutputCheck[] = [];
  for (const record of outputs.records) {
    const input = byName.get(record.input);
    outputChecks.push(
      input
        ? await checkOutput(record, input)
        : { input: String(record.input), problems: ['names no input of the soak'] },
    );
  }
  // Loudness: the engine's own figures for every output, and ffmpeg's on a sample beside them.
  const accepted = await readAcceptedMedia(engine.dataDir);
  const measuredBy = new Map(accepted.filter((m) => m.output).map((m) => [m.uid, m.output!]));
  const good = outputs.records.filter((r, i) => outputChecks[i].problems.length === 0 && measuredBy.has(r.media_uid));
  const engineLoudness = good.map((r) => {
    const m = measuredBy.get(r.media_uid)!;
    return {
      input: r.input,
      kind: byName.get(r.input)!.kind,
      verdict: loudnessVerdict(m.loudnessLufs, m.truePeakDbtp, m.limiterReductionDb, ENGINE_TRUE_PEAK_TOLERANCE_DB),
    };
  });
  const step = Math.max(1, Math.floor(good.length / LOUDNESS_SAMPLE));
  const loudness: LoudnessCheck[] = [];
  for (let i = 0; i < good.length; i += step)
    loudness.push(await checkLoudness(good[i], measuredBy.get(good[i].media_uid)!));

  const engineLogs = Object.entries(logFiles)
    .filter(([name]) => name.startsWith('engine'))
    .map(([, path]) => readFileSync(path, 'utf8'));
  const result: SoakResult = {
    startedAt,
    seconds: (Date.now() - t0) / 1000,
    setup: [
      `${MEDIA} WAVs of 1-3 s (speech-like, chords, speech in noise; 16-48 kHz, mono and stereo) dropped into a watched inbox/ over ${DROP_MS / 1000} s: bursts of 1-5, and batches of ${Math.min(BATCH, Math.floor(MEDIA / 10))} at the start, 1.5 s before each full deploy${DEPLOYS_ONLY ? '' : ' and while Node-RED is down'} (a new client meets them all at once).`,
      `Node-RED ${nodeRedVersion()} with the packed package installed; the flow: watch inbox/ (and a sweep at start and every 30 s) -> claim (move to work/) -> upload -> wait (timeout ${WAIT_TIMEOUT_S} s) -> download the original (PRE) and the enhanced file -> record a line; a Catch node records each failure's code and message.`,
      `The engine: the package's CLI in its own process on loopback, remote to the config node (key as its credential), with faults ${Object.entries(
        ENGINE_FAULTS,
      )
        .map(([k, v]) => `${k.replace('--fault-', '')} ${v}`)
        .join(
          ', ',
        )} (429: forced after each start) and limits per ${ENGINE_LIMITS.windowMs / 1000} s window of upload ${ENGINE_LIMITS.upload}, metadata ${ENGINE_LIMITS.metadata}, download ${ENGINE_LIMITS.download} (the config node allows 40 uploads).`,
      DEPLOYS_ONLY
        ? `During the drops: ${DISTURBANCES} (admin API), each with a batch dropped 1.5 s before it.`
        : `During the drops: ${DISTURBANCES} (admin API), each started again after ${DOWNTIME_MS / 1000} s on the same data dir / user dir and port.`,
    ],
    events: run.events,
    tally: tally(
      inputs,
      run.droppedAt,
      outputs.records,
      failures.records,
      accepted,
      run.events,
      leftIn,
      lastRequests(engineLogs),
    ),
    answers: countAnswers(engineLogs),
    outputChecks,
    engineLoudness,
    loudness,
    tempFiles,
    keyFoundIn: await filesContaining(logFiles, engine.key),
    brokenRecordLines: outputs.broken + failures.broken,
    samples: run.samples,
    drained,
  };
  const section = soakSection(result);
  process.stdout.write(`\n${section}\n`);
  if (!DEPLOYS_ONLY) writeSoakSection(join(ROOT, 'bench', 'RESULTS.md'), section);
  const unmet = unmetGoals(result);
  say(unmet.length === 0 ? 'goal met' : `goal not met: ${unmet.join(', ')}`);
  return unmet.length === 0 ? 0 : 1;
}

function nodeRedVersion(): string {
  return (
    JSON.parse(readFileSync(require.resolve('node-red/package.json', { paths: [ROOT] }), 'utf8')) as { version: string }
  ).version;
}

main().then(
  (code) => {
    cleanUp();
    process.exit(code);
  },
  (err: unknown) => {
    say(`the soak failed: ${(err as Error).stack ?? String(err)}`);
    cleanUp();
    process.exit(2);
  },
);
