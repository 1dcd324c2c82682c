// Upload and download of a large file through an engine whose media are on S3 (a local single-node Ceph,
// radosgw) against one whose media are on local disk, by curl, in alternating rounds: the throughput
// through S3 as a ratio of the local disk's, the median of the rounds with its range.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startEngine, type EngineHandle } from '../src/engine';
import { radosgwMissing, startTestRadosgw } from '../test/fixtures/radosgw-server';
import type { BenchReport } from './run';

const run$ = promisify(execFile);
const MiB = 1024 ** 2;
const SIZE = Number(process.env.BENCH_S3_BYTES ?? 1024 * MiB);
const ROUNDS = Number(process.env.BENCH_S3_ROUNDS ?? 3);
const KEY = 'bench-key';
const TITLE = 'Media on S3: transfer throughput against local disk';

type Phase = 'upload' | 'download';

export async function run(): Promise<BenchReport> {
  const missing = radosgwMissing();
  if (missing) return { title: TITLE, table: [['skipped'], [missing]], writtenAlone: true };
  const dir = await fsp.mkdtemp(join(tmpdir(), 'me-bench-s3-'));
  const gateway = await startTestRadosgw();
  Object.assign(process.env, gateway.env);
  const engines: EngineHandle[] = [];
  try {
    const file = join(dir, 'talk.wav');
    await writeFile(file, SIZE);
    const common = {
      apiKeys: [KEY],
      processorModule: join(__dirname, '..', 'src', 'engine', 'processors', 'copy-processor.js'),
      limits: { uploadMedia: null, getMetadata: null, downloadFile: null },
      maxUploadBytes: 4 * 1024 ** 3,
      onLogLine: () => undefined,
    };
    const local = await startEngine({ ...common, dataDir: join(dir, 'local') });
    engines.push(local);
    const s3 = await startEngine({
      ...common,
      dataDir: join(dir, 's3'),
      storage: 's3://media-enhance-bench/media',
      s3: { endpoint: gateway.endpoint, forcePathStyle: true },
    });
    engines.push(s3);
    const speeds: Record<'local' | 's3', Record<Phase, number[]>> = {
      local: { upload: [], download: [] },
      s3: { upload: [], download: [] },
    };
    /** Growth of this process's memory (the engines') over its level before each S3 transfer, in MiB. */
    const s3Rss: Record<Phase, number[]> = { upload: [], download: [] };
    // Round 0 warms up (the cluster makes its pools on first use) and is not counted.
    for (let round = 0; round <= ROUNDS; round++) {
      // Who goes first alternates, so neither always meets a machine just busied by the other.
      const order = round % 2 === 0 ? (['local', 's3'] as const) : (['s3', 'local'] as const);
      for (const name of order) {
        const engine = name === 'local' ? local : s3;
        const upRss = new PeakRss();
        const { uid, seconds: up } = await curlUpload(engine.url, file);
        upRss.stop();
        await settled(engine.url, uid);
        const downRss = new PeakRss();
        const down = await curlDownload(engine.url, uid);
        downRss.stop();
        await engine.storage.removeFinished(); // one media at a time in the cluster's memory
        if (round === 0) continue;
        speeds[name].upload.push(SIZE / MiB / up);
        speeds[name].download.push(SIZE / MiB / down);
        if (name === 's3') {
          s3Rss.upload.push(upRss.growthMiB());
          s3Rss.download.push(downRss.growthMiB());
        }
      }
    }
    const row = (phase: Phase) => {
      const ratios = speeds.s3[phase].map((speed, i) => speed / speeds.local[phase][i]);
      return [
        phase,
        `${median(speeds.local[phase]).toFixed(0)} MiB/s`,
        `${median(speeds.s3[phase]).toFixed(0)} MiB/s`,
        `${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`,
        `${Math.max(...s3Rss[phase]).toFixed(0)} MiB`,
      ];
    };
    return {
      title: TITLE,
      table: [
        ['transfer', 'local disk', 'S3 (radosgw)', 'S3 / local disk', 'engine memory growth, S3 (most)'],
        row('upload'),
        row('download'),
      ],
      notes: [
        `${SIZE / MiB} MiB file, curl as the client, ${ROUNDS} rounds after one not counted, alternating which engine goes first; median of the rounds (range).`,
        'The upload is timed until the `201`: through S3 that is after the last multipart part is stored and the upload completed.',
        "Memory growth: the engines' process (resident set) above its level before the transfer, sampled every 20 ms: the parts in flight and the heap's slack, not the file (64 MiB, 256 MiB and 1 GiB files: 32, 51 and 69 MiB on upload).",
        'radosgw is a single-node Ceph with one memory-backed OSD on this machine, sharing its cores with the engine and curl.',
      ],
      writtenAlone: true,
    };
  } finally {
    for (const engine of engines) await engine.close();
    await gateway.stop();
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

async function curlUpload(url: string, file: string): Promise<{ uid: string; seconds: number }> {
  const { stdout } = await run$(
    'curl',
    ['-sS', '-H', `x-api-key: ${KEY}`, '-F', `file=@${file}`, '-w', '\n%{time_total}', `${url}/v2/medias`],
    { maxBuffer: 1024 * 1024 },
  );
  const [body, seconds] = stdout.trim().split('\n');
  const uid = (JSON.parse(body) as { uid?: string }).uid;
  if (!uid) throw new Error(`upload refused: ${body}`);
  return { uid, seconds: Number(seconds) };
}

async function curlDownload(url: string, uid: string): Promise<number> {
  const { stdout } = await run$('curl', [
    '-sS',
    '-f',
    '-o',
    '/dev/null',
    '-H',
    `x-api-key: ${KEY}`,
    '-w',
    '%{time_total} %{size_download}',
    `${url}/v2/medias/${uid}/file?step=ENHANCED`,
  ]);
  const [seconds, size] = stdout.trim().split(' ').map(Number);
  if (size !== SIZE) throw new Error(`downloaded ${size} bytes of ${SIZE}`);
  return seconds;
}

async function settled(url: string, uid: string): Promise<void> {
  for (;;) {
    const res = await fetch(`${url}/v2/medias/${uid}/metadata`, { headers: { 'x-api-key': KEY } });
    const { enhancement_status: state } = (await res.json()) as { enhancement_status: string };
    if (state === 'COMPLETED') return;
    if (state === 'FAILED') throw new Error(`media ${uid} FAILED`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A WAV header and `size` bytes in all of quiet noise, written in chunks. */
async function writeFile(path: string, size: number): Promise<void> {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(size - 8, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(2, 22);
  header.writeUInt32LE(48_000, 24);
  header.writeUInt32LE(48_000 * 4, 28);
  header.writeUInt16LE(4, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(size - 44, 40);
  const out = createWriteStream(path);
  const chunk = Buffer.alloc(4 * MiB);
  for (let i = 0; i < chunk.length; i += 2) chunk.writeInt16LE(Math.round((Math.random() - 0.5) * 2000), i);
  out.write(header);
  for (let left = size - 44; left > 0; left -= chunk.length)
    if (!out.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

/** The most this process's resident memory grew above its level at the start, sampled every 20 ms. */
class PeakRss {
  private readonly start = process.memoryUsage().rss;
  private peak = this.start;
  private readonly timer = setInterval(() => (this.peak = Math.max(this.peak, process.memoryUsage().rss)), 20);

  stop(): void {
    clearInterval(this.timer);
    this.peak = Math.max(this.peak, process.memoryUsage().rss);
  }

  growthMiB(): number {
    return (this.peak - this.start) / MiB;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
