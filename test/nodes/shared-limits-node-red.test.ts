// Three Node-RED processes with the installed package, one API key and one Redis: each uploads through its
// own flow faster than the key allows, and together they stay inside the key's limits.
import assert from 'node:assert/strict';
import { type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { freePort } from '../fixtures/free-port';
import { makeWav } from '../fixtures/media';
import { ROOT as REPO, packPackage, spawnNodeRed, unpackPackage, waitForNodeRed } from '../fixtures/node-red-process';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { isMetadata, isUpload, windowReport } from '../client/shared-limiter-run';

const WINDOW_MS = 2_000;
const LIMITS = { uploadMedia: 6, getMetadata: 20 };
const RUN_MS = 15_000;

interface Instance {
  base: string;
  process: ChildProcess;
  output: () => string;
}

describe('three Node-RED processes on one key share their limits through Redis', function () {
  this.timeout(180_000);
  let root: string;
  let engine: TestEngine;
  let redis: TestRedis;
  const instances: Instance[] = [];

  before(async () => {
    await fsp.mkdir(join(REPO, 'test-artifacts'), { recursive: true });
    // Inside the repository, so the unpacked package finds its dependencies in the repository's node_modules.
    root = await fsp.mkdtemp(join(REPO, 'test-artifacts', 'shared-limits-'));
    const tarball = packPackage(root);
    engine = await startTestEngine({
      windowMs: WINDOW_MS,
      limits: LIMITS,
      processingDelayMs: 300,
      processorModule: join(__dirname, '../../src/engine/processors/copy-processor.js'),
      workers: 1,
    });
    redis = await startTestRedis();
    await Promise.all(
      [1, 2, 3].map(async (n) => {
        const userDir = join(root, `node-red-${n}`);
        unpackPackage(tarball, userDir);
        const port = await freePort();
        await fsp.writeFile(
          join(userDir, 'settings.js'),
          `module.exports = { uiHost: '127.0.0.1', uiPort: ${port}, credentialSecret: 'test-secret', flowFile: 'flows.json', logging: { console: { level: 'info' } } };\n`,
        );
        let output = '';
        const child = spawnNodeRed(userDir, join(userDir, 'settings.js'));
        child.stdout!.on('data', (chunk) => (output += chunk));
        child.stderr!.on('data', (chunk) => (output += chunk));
        const instance = { base: `http://127.0.0.1:${port}`, process: child, output: () => output };
        instances.push(instance);
        await waitForNodeRed(child, instance.base, instance.output, 90_000);
      }),
    );
  });

  after(async () => {
    await Promise.all(
      instances.map(async ({ process: child }) => {
        if (child.exitCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }),
    );
    await engine?.dispose();
    await redis?.stop();
    if (root) await fsp.rm(root, { recursive: true, force: true });
  });

  it('each uploads through its flow faster than the key allows: no 429, never over the limit in any window', async () => {
    const input = join(root, 'take.wav');
    await fsp.writeFile(input, makeWav(0.2, 8_000));
    const flows = [
      { id: 'tab', type: 'tab', label: 'shared' },
      {
        id: 'svc',
        type: 'media-enhance-config',
        name: 'remote',
        mode: 'remote',
        baseUrl: engine.url,
        limitUpload: String(LIMITS.uploadMedia),
        limitMetadata: String(LIMITS.getMetadata),
        redisUrl: redis.url,
        redisKeyPrefix: 'node-red-test',
        credentials: { apiKey: engine.apiKey },
      },
      {
        id: 'go',
        type: 'inject',
        z: 'tab',
        props: [{ p: 'filename', v: input, vt: 'str' }],
        // Twice what the key allows, in each of the three.
        repeat: String((2 * WINDOW_MS) / LIMITS.uploadMedia / 1000),
        once: true,
        onceDelay: 0.1,
        x: 100,
        y: 100,
        wires: [['upload']],
      },
      { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', x: 300, y: 100, wires: [['wait']] },
      { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', timeout: '60', x: 500, y: 100, wires: [[]] },
    ];
    await Promise.all(
      instances.map(async ({ base }) => {
        const deployed = await request(`${base}/flows`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
          body: JSON.stringify(flows),
        });
        assert.equal(deployed.statusCode, 204, await deployed.body.text());
      }),
    );
    // The run is timed from the first upload the engine sees, not from the deploy: on a loaded machine a
    // deploy takes seconds, which are no part of the limiter's pace. Any one flow alone asks for twice
    // what the key allows, so from then on the key is the bottleneck.
    const deadline = Date.now() + 60_000;
    let seen: number | undefined;
    while ((seen = engine.requests().find((r) => isUpload(r.path))?.at) === undefined) {
      assert.ok(Date.now() < deadline, 'no upload reached the engine within 60 s of the deploy');
      await new Promise((r) => setTimeout(r, 50));
    }
    const runEnd = seen + RUN_MS;
    await new Promise((r) => setTimeout(r, runEnd - Date.now()));
    const log = engine.requests();
    const uploads = windowReport(log, isUpload, WINDOW_MS);
    const polls = windowReport(log, isMetadata, WINDOW_MS);
    const summary = JSON.stringify({ uploads, polls });
    assert.equal(uploads.rejected429, 0, summary);
    assert.equal(polls.rejected429, 0, summary);
    assert.ok(uploads.busiestWindow <= LIMITS.uploadMedia, summary);
    assert.ok(polls.busiestWindow <= LIMITS.getMetadata, summary);
    // Busy together: most of what the window allows over the run was used.
    const inRun = windowReport(
      log.filter((r) => r.at < runEnd),
      isUpload,
      WINDOW_MS,
    ).accepted;
    assert.ok(inRun >= 0.6 * ((LIMITS.uploadMedia * RUN_MS) / WINDOW_MS), `${inRun} uploads in the run: ${summary}`);
    for (const { output } of instances) assert.ok(!output().includes('limits not shared'), output().slice(-2000));
  });
});
