// docs/several-machines.md, "Try it on one machine", run as written: its HAProxy and nginx files saved
// where it says, its commands run one line at a time in bash from the checkout (a line ending in `&` in
// a process of its own, as a terminal of its own would), with two changes only: free loopback ports for
// 6379, 8600, 8601 and 8602, and a temp folder for /tmp/media-enhance-try. Then the service behind the
// balancer is used as a user would: loudness only (an extension the engines declare when asked), the
// file downloaded, and with HAProxy, one engine stopped while the other serves.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaEnhanceClient } from '../../src';
import { makeWav } from '../fixtures/media';
import { freePort } from '../fixtures/free-port';
import { readUntil } from '../fixtures/read-until';

const ROOT = join(__dirname, '..', '..', '..');
const DOC = join(ROOT, 'docs', 'several-machines.md');
const PROGRAMS = ['/usr/bin/redis-server', '/usr/sbin/haproxy', '/usr/sbin/nginx'];

/** The code blocks of the doc's "Try it on one machine" section, by their language. */
function tryItBlocks(): { sh: string; haproxy: string; nginx: string } {
  const doc = readFileSync(DOC, 'utf8');
  const start = doc.indexOf('### Try it on one machine');
  assert.ok(start >= 0, 'the doc has a section "Try it on one machine"');
  const section = doc.slice(start, doc.indexOf('\n### ', start + 1));
  const block = (lang: string) => {
    const found = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section);
    assert.ok(found, `a ${lang} block in the section`);
    return found[1];
  };
  return { sh: block('sh'), haproxy: block('haproxy'), nginx: block('nginx') };
}

describe('docs/several-machines.md: "Try it on one machine", as written', function () {
  this.timeout(240_000);
  const missing = PROGRAMS.filter((program) => !existsSync(program));
  let folder: string;
  let ports: Record<string, number>;
  const running: ChildProcess[] = [];
  let output = '';
  let env: NodeJS.ProcessEnv = { ...process.env };

  before(function () {
    if (missing.length > 0) {
      console.log(`      skipped: ${missing.join(', ')} missing (apt-get install redis-server haproxy nginx-light)`);
      this.skip();
    }
  });

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'media-enhance-try-'));
    ports = { 6379: await freePort(), 8600: await freePort(), 8601: await freePort(), 8602: await freePort() };
    env = { ...process.env };
    output = '';
  });

  afterEach(async () => {
    for (const child of running.splice(0)) {
      try {
        process.kill(-child.pid!, 'SIGKILL'); // the line's whole process group: npx, node, redis-server
      } catch {
        // already gone
      }
    }
    spawnSync('/usr/sbin/nginx', ['-p', folder, '-c', 'nginx.conf', '-s', 'stop'], { stdio: 'ignore' });
    await rm(folder, { recursive: true, force: true });
  });

  /** The doc's text with the ports and the folder of this run: nothing else changes. */
  const localised = (text: string) =>
    Object.entries(ports)
      .reduce((t, [port, free]) => t.replace(new RegExp(`\\b${port}\\b`, 'g'), String(free)), text)
      .replaceAll('/tmp/media-enhance-try', folder);

  /** Runs one line of the doc in bash from the checkout, as a terminal would; `export` lines set the env. */
  function runLine(line: string): ChildProcess | undefined {
    if (line.startsWith('export ')) {
      const result = spawnSync('bash', ['-c', `${line} && env -0`], { cwd: ROOT, env, encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
      env = Object.fromEntries(
        result.stdout
          .split('\0')
          .filter(Boolean)
          .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
      );
      return undefined;
    }
    const child = spawn('bash', ['-c', line.replace(/&\s*$/, '')], { cwd: ROOT, env, detached: true });
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    running.push(child);
    return child;
  }

  const healthy = async (port: number) => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200;
    } catch {
      return false;
    }
  };

  /** Starts everything the doc's commands start, with `balancer` as the last line. */
  async function startAsWritten(balancer: 'haproxy' | 'nginx'): Promise<ChildProcess[]> {
    const blocks = tryItBlocks();
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'haproxy.cfg'), localised(blocks.haproxy));
    await writeFile(join(folder, 'nginx.conf'), localised(blocks.nginx));
    const lines = localised(blocks.sh)
      .split('\n')
      .filter((line) => line.trim() !== '');
    const last = lines.pop()!;
    assert.match(last, /^haproxy -f /, 'the last line starts HAProxy');
    const engines: ChildProcess[] = [];
    for (const line of lines) {
      const child = runLine(line);
      if (line.startsWith('redis-server'))
        await readUntil(
          () => output,
          (text) => /Ready to accept connections/.test(text),
          'Redis ready',
        );
      if (child && /media-enhance-engine/.test(line)) engines.push(child);
    }
    for (const port of [ports[8601], ports[8602]])
      await readUntil(() => healthy(port), Boolean, `the engine on ${port} healthy (output:\n${output})`, {
        timeoutMs: 60_000,
        everyMs: 250,
      });
    // The doc says: nginx -p /tmp/media-enhance-try -c nginx.conf instead of the haproxy line.
    runLine(balancer === 'haproxy' ? last : localised('nginx -p /tmp/media-enhance-try -c nginx.conf'));
    await readUntil(() => healthy(ports[8600]), Boolean, `the ${balancer} answering (output:\n${output})`, {
      timeoutMs: 30_000,
      everyMs: 250,
    });
    return engines;
  }

  /** Loudness only through the balancer, as a config node asking the service for its extensions sends it. */
  async function enhanceThrough(count: number): Promise<void> {
    const client = new MediaEnhanceClient({
      baseUrl: `http://127.0.0.1:${ports[8600]}`,
      apiKey: 'try-it-key',
      extensions: 'ask',
      poll: { initialMs: [100, 200], longMs: [200, 400] },
    });
    try {
      const wav = makeWav(1, 16_000);
      for (let i = 0; i < count; i++) {
        const media = await client.uploadMedia({
          file: wav,
          fileName: `take-${i}.wav`,
          media_enhancement: { enhancement_model: 'LOUDNESS_ONLY' },
        });
        const done = await client.waitForCompletion(media.uid, { timeoutMs: 60_000 });
        assert.equal(done.enhancement_params?.processing, 'loudness');
        const file = await client.downloadFile(media.uid);
        const chunks: Buffer[] = [];
        for await (const chunk of file.stream) chunks.push(chunk as Buffer);
        assert.equal(Buffer.concat(chunks).subarray(0, 4).toString(), 'RIFF', 'a WAV file');
      }
    } finally {
      await client.close();
    }
  }

  it('with HAProxy: serves the engines as one, and goes on when one engine stops (its check fails)', async () => {
    const [first] = await startAsWritten('haproxy');
    await enhanceThrough(4);
    process.kill(-first.pid!, 'SIGKILL');
    // Two failed checks, 2 s apart: then every request goes to the other engine.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    await enhanceThrough(2);
  });

  it('with nginx: serves the engines as one', async () => {
    await startAsWritten('nginx');
    await enhanceThrough(3);
  });
});
