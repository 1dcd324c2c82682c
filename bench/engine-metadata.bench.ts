// Metadata GET throughput of the engine with 50 concurrent keep-alive connections, against a bare
// node:http server answering a fixed JSON body, each in a child process, loaded the same way in the same run.
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, request } from 'undici';
import FormData from 'form-data';
import type { BenchReport } from './run';

const CONNECTIONS = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const KEY = 'bench-key';

const BARE_SERVER = `
const body = JSON.stringify({ uid: 'x', file_name: 'a.wav', enhancement_status: 'COMPLETED', enhancement_params: {}, inserted_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' });
require('node:http').createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}).listen(0, '127.0.0.1', function () { console.log('http://127.0.0.1:' + this.address().port); });
`;

/** Starts a server in a child process and resolves with the URL it prints first. */
function startChild(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.setEncoding('utf8');
    child.stdout.once('data', (text: string) => {
      const url = /http:\/\/[\d.:]+/.exec(text)?.[0];
      if (url) resolve({ url, child });
      else reject(new Error(`no URL in: ${text}`));
    });
    child.once('error', reject);
  });
}

/** Keeps CONNECTIONS requests in flight for SECONDS and counts the answers. */
async function load(origin: string, path: string): Promise<{ perSecond: number; errors: number }> {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
  const end = Date.now() + SECONDS * 1000;
  let done = 0;
  let errors = 0;
  const worker = async () => {
    while (Date.now() < end) {
      const res = await pool.request({ method: 'GET', path, headers: { 'x-api-key': KEY } });
      await res.body.dump();
      if (res.statusCode === 200) done++;
      else errors++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const elapsed = (Date.now() - started) / 1000;
  await pool.close();
  return { perSecond: done / elapsed, errors };
}

export async function run(): Promise<BenchReport> {
  const dir = await fsp.mkdtemp(join(tmpdir(), 'me-bench-engine-'));
  const engine = await startChild([
    join(__dirname, '..', 'src', 'engine', 'cli.js'),
    '--port',
    '0',
    '--key',
    KEY,
    '--data-dir',
    dir,
    '--limit-metadata',
    '100000000',
    '--quiet',
  ]);
  const bare = await startChild(['-e', BARE_SERVER]);
  try {
    const form = new FormData();
    const wav = Buffer.alloc(1044);
    wav.write('RIFF', 0);
    wav.write('WAVE', 8);
    form.append('file', wav, { filename: 'bench.wav' });
    const created = await request(`${engine.url}/v2/medias`, {
      method: 'POST',
      headers: { ...form.getHeaders(), 'x-api-key': KEY },
      body: form.getBuffer(),
    });
    const { uid } = (await created.body.json()) as { uid: string };
    await load(bare.url, '/'); // warm-up of the generator
    const reference = await load(bare.url, '/');
    const measured = await load(engine.url, `/v2/medias/${uid}/metadata`);
    return {
      title: `Engine metadata GET throughput, ${CONNECTIONS} keep-alive connections, ${SECONDS} s each`,
      table: [
        ['server', 'requests/s', 'non-200 answers', 'ratio to bare node:http', 'goal'],
        ['bare node:http, fixed JSON', reference.perSecond.toFixed(0), String(reference.errors), '1.00', ''],
        [
          'local engine, GET .../metadata',
          measured.perSecond.toFixed(0),
          String(measured.errors),
          (measured.perSecond / reference.perSecond).toFixed(2),
          '>= 0.5',
        ],
      ],
      notes: [
        'Each server runs in a child process; the load generator (undici Pool) runs in the benchmark process.',
        "The engine's metadata limit is raised for the run so its rate limiter answers every request with 200 (it still counts each one).",
      ],
    };
  } finally {
    engine.child.kill('SIGTERM');
    bare.child.kill('SIGTERM');
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
