// Upload then download of a large file through the local engine: the client's memory growth, and its
// throughput against curl doing the same two transfers against the same engine in the same run.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, promises as fsp } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { MediaEnhanceClient } from '../src';
import { startEngine } from '../src/engine';
import type { BenchReport } from './run';

const run$ = promisify(execFile);
const SIZE = Number(process.env.BENCH_TRANSFER_BYTES ?? 1024 ** 3);
const MiB = 1024 ** 2;

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

async function curlTransfers(
  url: string,
  apiKey: string,
  input: string,
  output: string,
): Promise<{ uploadMs: number; downloadMs: number }> {
  const t0 = performance.now();
  const { stdout } = await run$(
    'curl',
    [
      '-sS',
      '--fail',
      '-H',
      `x-api-key: ${apiKey}`,
      '-F',
      `file=@${input};type=application/octet-stream`,
      `${url}/v2/medias`,
    ],
    {
      maxBuffer: 1 * MiB,
    },
  );
  const uploadMs = performance.now() - t0;
  const { uid } = JSON.parse(stdout) as { uid: string };
  const client = new MediaEnhanceClient({ baseUrl: url, apiKey, poll: { initialMs: [200, 300], longMs: [200, 300] } });
  await client.waitForCompletion(uid);
  await client.close();
  const t1 = performance.now();
  await run$('curl', ['-sS', '--fail', '-H', `x-api-key: ${apiKey}`, '-o', output, `${url}/v2/medias/${uid}/file`]);
  return { uploadMs, downloadMs: performance.now() - t1 };
}

/** RSS growth of a child process that only streams the file into a socket that discards it. */
async function bareStreamRss(input: string): Promise<number> {
  const sink = createServer((socket) => socket.resume());
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = sink.address() as AddressInfo;
    const child = await run$(process.execPath, [join(__dirname, 'stream-reference.js'), String(port), input], {
      maxBuffer: MiB,
    });
    return (JSON.parse(child.stdout) as { rssGrowth: number }).rssGrowth;
  } finally {
    sink.close();
  }
}

export async function run(): Promise<BenchReport> {
  const dir = await fsp.mkdtemp(join(tmpdir(), 'me-bench-transfer-'));
  const apiKey = 'bench-key';
  const engine = await startEngine({
    port: 0,
    apiKeys: [apiKey],
    dataDir: join(dir, 'engine'),
    maxUploadBytes: SIZE * 2,
  });
  try {
    const input = join(dir, 'input.wav');
    await writeWav(input, SIZE);
    const mib = SIZE / MiB;
    const curl = await curlTransfers(engine.url, apiKey, input, join(dir, 'curl-out.wav'));
    await fsp.rm(join(dir, 'curl-out.wav'));
    const child = await run$(
      process.execPath,
      [join(__dirname, 'transfer-client.js'), engine.url, apiKey, input, join(dir, 'client-out.wav')],
      { maxBuffer: MiB },
    );
    const client = JSON.parse(child.stdout) as {
      uploadMs: number;
      downloadMs: number;
      bytes: number;
      rssGrowth: number;
    };
    const floor = await bareStreamRss(input);
    const speed = (ms: number) => `${(mib / (ms / 1000)).toFixed(0)} MiB/s`;
    return {
      title: `Client transfers: upload then download of ${mib.toFixed(0)} MiB through the local engine`,
      table: [
        ['measure', 'client', 'curl', 'client / curl', 'goal'],
        [
          'upload throughput',
          speed(client.uploadMs),
          speed(curl.uploadMs),
          (curl.uploadMs / client.uploadMs).toFixed(2),
          '>= 0.8',
        ],
        [
          'download throughput',
          speed(client.downloadMs),
          speed(curl.downloadMs),
          (curl.downloadMs / client.downloadMs).toFixed(2),
          '>= 0.8',
        ],
        [
          'peak RSS growth of the client process',
          `${(client.rssGrowth / MiB).toFixed(1)} MiB`,
          '',
          `${((client.rssGrowth / SIZE) * 100).toFixed(2)} % of the file`,
          '< 64 MiB',
        ],
        [
          'peak RSS growth, bare Node stream of the file into a socket (the floor)',
          `${(floor / MiB).toFixed(1)} MiB`,
          '',
          `client / floor ${(client.rssGrowth / floor).toFixed(2)}`,
          '',
        ],
      ],
      notes: [
        'The engine runs in the benchmark process; the client runs in a child process of its own, so its memory is measured alone.',
        'Both clients talk to the same engine over loopback; the file is written once and sent by both.',
        'The floor: Node alone grows by about this much when it streams this many bytes (its young-generation garbage collector sizes itself to the allocation rate); the client holds no buffer of the file.',
      ],
    };
  } finally {
    await engine.close();
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
