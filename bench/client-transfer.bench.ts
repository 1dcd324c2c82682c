// Upload then download of a large file through the local engine, by the client, by bare Node (the
// floor), by undici alone and by curl, in rounds against one engine running in a process of its own:
// the client's throughput against curl's and its memory growth against the floor's, each a ratio
// within a round, reported as the median of the rounds with its range.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { MediaEnhanceClient } from '../src';
import { WARM_UP_REQUESTS, type TransferPasses, type TransferTimes } from './peak-rss';
import type { BenchReport } from './run';

const run$ = promisify(execFile);
/** The file's size; smaller sizes are for trying changes out, the reported figure is for 1 GiB. */
const SIZE = Number(process.env.BENCH_TRANSFER_BYTES ?? 1024 ** 3);
const ROUNDS = Number(process.env.BENCH_TRANSFER_ROUNDS ?? 5);
const MiB = 1024 ** 2;
const API_KEY = 'bench-key';

type Contestant = 'client' | 'floor' | 'undici' | 'curl';
/** Who goes first moves round by round, so no one always meets the engine just after the same other. */
const CONTESTANTS: Contestant[] = ['client', 'floor', 'undici', 'curl'];

type Pass = keyof TransferPasses;
type SpeedPhase = 'uploadMs' | 'downloadMs';
type RssPhase = 'uploadRss' | 'downloadRss' | 'rssGrowth';

/** A WAV header followed by `size` bytes of quiet noise, written in chunks (never whole in memory). */
async function writeWav(path: string, size: number): Promise<void> {
  const dataBytes = size - 44;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(Math.min(0xffffffff, 36 + dataBytes), 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(2, 22);
  header.writeUInt32LE(48_000, 24);
  header.writeUInt32LE(48_000 * 4, 28);
  header.writeUInt16LE(4, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(Math.min(0xffffffff, dataBytes), 40);
  const out = createWriteStream(path);
  const chunk = Buffer.alloc(4 * MiB);
  for (let i = 0; i < chunk.length; i += 2) chunk.writeInt16LE(Math.round((Math.random() - 0.5) * 2000), i);
  const write = async (b: Buffer) => {
    if (!out.write(b)) await once(out, 'drain');
  };
  await write(header);
  for (let left = dataBytes; left > 0; left -= chunk.length)
    await write(left >= chunk.length ? chunk : chunk.subarray(0, left));
  out.end();
  await once(out, 'finish');
}

interface EngineProcess {
  url: string;
  stop(): Promise<void>;
}

async function startEngineProcess(dataDir: string): Promise<EngineProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [join(__dirname, 'transfer-engine.js'), dataDir, String(SIZE * 2)],
    { env: { ...process.env, BENCH_ENGINE_KEY: API_KEY }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout! });
  const [first] = (await Promise.race([once(lines, 'line'), exited])) as [string | number | null];
  if (typeof first !== 'string') throw new Error(`the engine process ended before it listened (exit ${first})`);
  const { url } = JSON.parse(first) as { url: string };
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function curlTransfers(url: string, input: string, output: string): Promise<TransferTimes> {
  const t0 = performance.now();
  const { stdout } = await run$(
    'curl',
    [
      '-sS',
      '--fail',
      '-H',
      `x-api-key: ${API_KEY}`,
      '-F',
      `file=@${input};type=application/octet-stream`,
      `${url}/v2/medias`,
    ],
    { maxBuffer: MiB },
  );
  const uploadMs = performance.now() - t0;
  const { uid } = JSON.parse(stdout) as { uid: string };
  const client = new MediaEnhanceClient({
    baseUrl: url,
    apiKey: API_KEY,
    poll: { initialMs: [200, 300], longMs: [200, 300] },
  });
  await client.waitForCompletion(uid);
  await client.close();
  const t1 = performance.now();
  await run$('curl', ['-sS', '--fail', '-H', `x-api-key: ${API_KEY}`, '-o', output, `${url}/v2/medias/${uid}/file`]);
  return { uploadMs, downloadMs: performance.now() - t1, uploadRss: NaN, downloadRss: NaN, rssGrowth: NaN };
}

/** One contestant's upload, wait and download; its output must be the whole file. */
async function transfer(
  who: Contestant,
  start: 'fresh' | 'warm-up',
  url: string,
  input: string,
  output: string,
): Promise<TransferTimes> {
  let times: TransferTimes;
  if (who === 'curl') times = await curlTransfers(url, input, output);
  else {
    const args =
      who === 'client'
        ? [join(__dirname, 'transfer-client.js'), url, API_KEY, input, output, start]
        : [
            join(__dirname, 'stream-reference.js'),
            url,
            API_KEY,
            input,
            output,
            who === 'floor' ? 'node:http' : 'undici',
            start,
          ];
    const child = await run$(process.execPath, ['--expose-gc', ...args], { maxBuffer: MiB });
    times = JSON.parse(child.stdout) as TransferTimes;
  }
  const received = (await fsp.stat(output)).size;
  if (received !== SIZE) throw new Error(`${who}: downloaded ${received} of ${SIZE} bytes`);
  await fsp.rm(output);
  return times;
}

/** A Node contestant in a fresh process, then in one warmed up; curl once (it has no such thing). */
async function transfers(who: Contestant, url: string, input: string, output: string): Promise<TransferPasses> {
  const fresh = await transfer(who, 'fresh', url, input, output);
  return { fresh, warmedUp: who === 'curl' ? fresh : await transfer(who, 'warm-up', url, input, output) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** `median (min-max)` of per-round values. */
function spread(values: number[], digits: number, unit = ''): string {
  const f = (v: number) => `${v.toFixed(digits)}${unit}`;
  return `${f(median(values))} (${f(Math.min(...values))}-${f(Math.max(...values))})`;
}

export async function run(): Promise<BenchReport> {
  const dir = await fsp.mkdtemp(join(tmpdir(), 'me-bench-transfer-'));
  const input = join(dir, 'input.wav');
  await writeWav(input, SIZE);
  const engine = await startEngineProcess(join(dir, 'engine'));
  try {
    const output = join(dir, 'output.wav');
    await transfer('curl', 'fresh', engine.url, input, output); // warm-up: the engine's code compiled, the file in the page cache
    const rounds: Record<Contestant, TransferPasses>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const passes = {} as Record<Contestant, TransferPasses>;
      for (let i = 0; i < CONTESTANTS.length; i++) {
        const who = CONTESTANTS[(round + i) % CONTESTANTS.length];
        passes[who] = await transfers(who, engine.url, input, output);
      }
      rounds.push(passes);
      console.error(`  round ${round + 1}: ${JSON.stringify(passes)}`);
    }
    const mib = SIZE / MiB;
    const of = (pass: Pass, who: Contestant) => rounds.map((r) => r[who][pass]);
    const speedRow = (label: string, pass: Pass, phase: SpeedPhase, goal: string) => {
      const speeds = (who: Contestant) =>
        spread(
          of(pass, who).map((t) => mib / (t[phase] / 1000)),
          0,
          ' MiB/s',
        );
      const ratio = (who: Contestant) =>
        spread(
          rounds.map((r) => r.curl[pass][phase] / r[who][pass][phase]),
          2,
        );
      return [
        label,
        ...(['client', 'floor', 'undici', 'curl'] as const).map(speeds),
        `client / curl ${ratio('client')}; bare Node / curl ${ratio('floor')}; undici / curl ${ratio('undici')}`,
        goal,
      ];
    };
    const rssRow = (label: string, pass: Pass, phase: RssPhase, goal: string) => {
      const growth = (who: Contestant) =>
        spread(
          of(pass, who).map((t) => t[phase] / MiB),
          1,
          ' MiB',
        );
      const ratio = (who: Contestant) =>
        spread(
          rounds.map((r) => r[who][pass][phase] / r.floor[pass][phase]),
          2,
        );
      return [
        label,
        ...(['client', 'floor', 'undici'] as const).map(growth),
        '',
        `client / bare Node ${ratio('client')}; undici / bare Node ${ratio('undici')}`,
        goal,
      ];
    };
    return {
      title: `Client transfers: upload then download of ${mib.toFixed(0)} MiB through the local engine, ${ROUNDS} rounds`,
      table: [
        ['measure', 'client', 'bare Node (floor)', 'undici alone', 'curl', 'ratio, median (min-max)', 'goal'],
        speedRow('upload throughput', 'warmedUp', 'uploadMs', 'client / curl >= 0.9'),
        speedRow('download throughput', 'warmedUp', 'downloadMs', 'client / curl >= 0.9'),
        rssRow('peak RSS growth, upload and download', 'warmedUp', 'rssGrowth', 'client / bare Node <= 1.25'),
        rssRow('peak RSS growth during the upload', 'warmedUp', 'uploadRss', ''),
        rssRow('peak RSS growth during the download', 'warmedUp', 'downloadRss', ''),
        speedRow('fresh process: upload throughput', 'fresh', 'uploadMs', ''),
        speedRow('fresh process: download throughput', 'fresh', 'downloadMs', ''),
        rssRow('fresh process: peak RSS growth, upload and download', 'fresh', 'rssGrowth', ''),
      ],
      notes: [
        'Each cell: the median of the rounds, then the lowest and highest round. A ratio is taken within each round (the same engine, the same minute), then its median and range over the rounds.',
        'The engine runs in a process of its own (its processor copies the file: transfers are measured, not enhancement); the client, bare Node and undici alone each run in a child process of their own, curl is its own program. One transfer at a time; who goes first changes each round, after one warm-up by curl.',
        "Bare Node (the floor): the same upload, wait and download with node:http and fs streams at their default buffer sizes and nothing else. Its memory growth is what Node itself costs to move this many bytes (its garbage collector frees the chunks in batches). Undici alone: the same, with undici (the HTTP library the client uses) in place of node:http, nothing of the client around it; it shows which part of the client's memory is the library's (bench/stream-reference.ts).",
        `Each Node contestant runs twice a round, each time in a new process: warmed up (the first rows: ${WARM_UP_REQUESTS} small requests first, as in a process that has been talking to the service, like Node-RED) and fresh (the last rows: the transfer is the first thing the process does, so V8 also compiles the hot code during it; for undici its WebAssembly HTTP parser, whose optimizing compile takes 15-35 MiB for a moment, once per process: with --liftoff-only undici alone stays at the floor). Memory is measured from a collected heap (--expose-gc) just before the upload.`,
        "Throughput is the file's size over the time from the first byte sent to the answer (upload) or from the request to the last byte on disk (download); curl's includes starting the program.",
      ],
    };
  } finally {
    await engine.stop();
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
