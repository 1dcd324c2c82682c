// Several engine processes started with the CLI on free loopback ports, sharing one Redis, as the
// README's "Several machines" runs them. What they keep media on is a parameter (`storage`): the data
// folder they share by default; a variant passes other arguments (and environment) per instance.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { probe } from '../fixtures/ffmpeg';
import { freePort } from '../fixtures/free-port';

export const CLUSTER_KEY = 'cluster-test-key';
const CLI = resolve(__dirname, '..', '..', 'src', 'engine', 'cli.js');

/** What an instance keeps its media on: the arguments (and environment) each instance gets. */
export interface ClusterStorage {
  args(instance: number): string[];
  env?: Record<string, string>;
}

/** Every instance's media in one data folder: the same machine here, a network folder on several. */
export function sharedFolder(dataDir: string): ClusterStorage {
  return { args: () => ['--data-dir', dataDir] };
}

export interface EngineInstance {
  url: string;
  /** Everything it printed on standard output (the access log, removals). */
  output(): string;
  /** Everything it printed on standard error. */
  errors(): string;
  /** Its process id (in the name it gives itself in the media it processes). */
  pid: number;
  /** As a machine dying: SIGKILL, no clean-up. */
  kill9(): Promise<void>;
  /** As a machine that stands still (swapped out, its VM paused): SIGSTOP, then SIGCONT. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** The Redis the instances share; none: each instance is one process on its own (a reference). */
  redisUrl?: string;
  storage: ClusterStorage;
  /** More CLI arguments for every instance. */
  args?: string[];
}

export class EngineCluster {
  readonly instances: EngineInstance[] = [];
  private started = 0;

  constructor(private readonly options: ClusterOptions) {}

  /** Starts one more instance (a new process) and resolves once it listens. */
  async add(args: string[] = []): Promise<EngineInstance> {
    const port = await freePort();
    const index = this.started++;
    const child = spawn(
      process.execPath,
      [
        CLI,
        '--port',
        String(port),
        ...(this.options.redisUrl ? ['--redis', this.options.redisUrl] : []),
        ...this.options.storage.args(index),
        ...(this.options.args ?? []),
        ...args,
      ],
      {
        env: { ...process.env, MEDIA_ENHANCE_KEYS: CLUSTER_KEY, ...this.options.storage.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const instance = watch(child, `http://127.0.0.1:${port}`);
    await listening(child, instance);
    this.instances.push(instance);
    return instance;
  }

  async stop(): Promise<void> {
    await Promise.all(this.instances.map((i) => i.stop()));
  }
}

function watch(child: ChildProcess, url: string): EngineInstance {
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  };
  return {
    url,
    pid: child.pid!,
    output: () => out,
    errors: () => err,
    kill9: () => end('SIGKILL'),
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop: () => end('SIGTERM'),
  };
}

async function listening(child: ChildProcess, instance: EngineInstance): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!instance.output().includes('listening on')) {
    if (child.exitCode !== null) throw new Error(`the engine exited: ${instance.errors()}`);
    if (Date.now() > deadline) throw new Error(`the engine did not start: ${instance.errors()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A temporary folder, removed by the returned function. */
export function tempFolder(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** POST /v2/medias of a WAV on `url`: the status, headers and JSON body. */
export async function uploadWav(
  url: string,
  wav: Buffer,
  name = 'speech.wav',
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), name);
  form.append('media_enhancement', JSON.stringify({ enhancement_model: 'FINCH' }));
  const res = await fetch(`${url}/v2/medias`, { method: 'POST', headers: { 'x-api-key': CLUSTER_KEY }, body: form });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

export async function getJson(
  url: string,
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(url, { headers: { 'x-api-key': CLUSTER_KEY } });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

export async function getBytes(url: string): Promise<{ status: number; body: Buffer }> {
  const res = await fetch(url, { headers: { 'x-api-key': CLUSTER_KEY } });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

/** Follows a media with status requests spread over `urls` (one after another) until it has ended. */
export async function followToEnd(urls: string[], uid: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; ; i++) {
    const url = urls[i % urls.length];
    const answer = await getJson(`${url}/v2/medias/${uid}/metadata`).catch(() => undefined);
    const state = answer?.body.enhancement_status;
    if (state === 'COMPLETED' || state === 'FAILED') return answer!.body;
    if (Date.now() > deadline)
      throw new Error(`media ${uid} did not end within ${timeoutMs} ms (last: ${String(state)})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The duration ffprobe finds in a downloaded file (written to `folder` to be probed). */
export async function secondsOf(bytes: Buffer, folder: string): Promise<number> {
  const path = join(folder, `probe-${sha256(bytes).slice(0, 12)}`);
  writeFileSync(path, bytes);
  return Number((await probe(path)).format.duration);
}
