// Node-RED killed (SIGKILL) right after enhance file put a finished file in place, before its journal
// noted it: the restarted Node-RED hands that file on, once, under its name. No numbered second copy, no
// part file left, nothing sent to Catch (with "if the file exists: error" too). The crash comes through a
// seam (test/fixtures/crash-seam.ts) loaded into the child process: the package runs as installed.
import assert from 'node:assert/strict';
import { type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { freePort } from '../fixtures/free-port';
import { makeWav } from '../fixtures/media';
import { ROOT as REPO, packPackage, spawnNodeRed, unpackPackage, waitForNodeRed } from '../fixtures/node-red-process';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SEAM = join(__dirname, '..', 'fixtures', 'crash-seam.js');

/** The lines of a file, none while it is not there. */
const linesOf = (path: string) =>
  fsp.readFile(path, 'utf8').then(
    (text) => text.split('\n').filter((line) => line !== ''),
    () => [] as string[],
  );

describe('nodes: Node-RED killed right after a file is put in place', function () {
  this.timeout(240_000);
  let root: string;
  let tarball: string;
  let engine: TestEngine;
  const children: ChildProcess[] = [];

  before(async () => {
    await fsp.mkdir(join(REPO, 'test-artifacts'), { recursive: true });
    // Inside the repository, so the unpacked package finds its dependencies in the repository's node_modules.
    root = await fsp.mkdtemp(join(REPO, 'test-artifacts', 'crash-after-placing-'));
    tarball = packPackage(root);
    engine = await startTestEngine({
      processorModule: join(__dirname, '../../src/engine/processors/copy-processor.js'),
      limits: { uploadMedia: null, getMetadata: null, downloadFile: null },
    });
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await engine?.dispose();
    if (root) await fsp.rm(root, { recursive: true, force: true });
  });

  /** A media of `file` on the engine, processed. */
  async function processed(file: Buffer): Promise<string> {
    const { MediaEnhanceClient } = await import('../../src/client');
    const client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
    try {
      const { uid } = await client.uploadMedia({ file, fileName: 'episode.wav' });
      await client.waitForCompletion(uid, { timeoutMs: 30_000 });
      return uid;
    } finally {
      await client.close();
    }
  }

  /** Node-RED on `userDir`, started and answering; `crash` loads the seam with its settings. */
  async function startNodeRed(
    userDir: string,
    port: number,
    crash?: { after: string; name: string },
  ): Promise<{ child: ChildProcess; base: string; output: () => string }> {
    const env = { ...process.env };
    if (crash) {
      env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${SEAM}`.trim();
      env.MEDIA_ENHANCE_CRASH_AFTER = crash.after;
      env.MEDIA_ENHANCE_CRASH_NAME = crash.name;
    }
    let output = '';
    const child = spawnNodeRed(userDir, join(userDir, 'settings.js'), { env });
    children.push(child);
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const base = `http://127.0.0.1:${port}`;
    await waitForNodeRed(child, base, () => output, 90_000);
    return { child, base, output: () => output };
  }

  for (const [nodeType, after, ifExists] of [
    ['media-enhance-file', 'link', 'number'],
    ['media-enhance-file', 'part-removed', 'error'],
    ['media-enhance-download', 'link', 'error'],
  ] as const) {
    it(`${nodeType} killed right after the ${after === 'link' ? 'final name is linked' : 'part file is removed'} (if the file exists: ${ifExists}): the restart hands the file on once, under its name`, async () => {
      const userDir = join(root, `${nodeType}-${after}`);
      unpackPackage(tarball, userDir);
      const port = await freePort();
      await fsp.writeFile(
        join(userDir, 'settings.js'),
        `module.exports = { uiHost: '127.0.0.1', uiPort: ${port}, credentialSecret: 'test-secret', flowFile: 'flows.json', logging: { console: { level: 'info' } } };\n`,
      );
      const input = join(userDir, 'episode.wav');
      await fsp.writeFile(input, makeWav(1, 16_000));
      // enhance file uploads the file; download fetches a media uploaded here.
      const message =
        nodeType === 'media-enhance-file'
          ? { p: 'filename', v: input, vt: 'str' }
          : { p: 'media_uid', v: await processed(await fsp.readFile(input)), vt: 'str' };
      const outbox = join(userDir, 'outbox');
      const delivered = join(userDir, 'delivered.log');
      const caught = join(userDir, 'caught.log');
      const logTo = (id: string, filename: string) => ({
        id,
        type: 'file',
        z: 'tab',
        filename,
        filenameType: 'str',
        appendNewline: true,
        createDir: true,
        overwriteFile: 'false',
        encoding: 'none',
        wires: [],
      });
      const flows = [
        { id: 'tab', type: 'tab', label: 'crash' },
        {
          id: 'svc',
          type: 'media-enhance-config',
          name: 'remote',
          mode: 'remote',
          baseUrl: engine.url,
          credentials: { apiKey: engine.apiKey },
        },
        { id: 'go', type: 'inject', z: 'tab', props: [message], wires: [['under-test']] },
        {
          id: 'under-test', // not `file`: Node-RED would take its `output: 'file'` for a link to itself
          type: nodeType,
          z: 'tab',
          service: 'svc',
          model: 'FINCH',
          output: 'file',
          folder: 'outbox',
          fileName: 'ep.wav',
          ifExists,
          wires: [['path']],
        },
        {
          id: 'path',
          type: 'change',
          z: 'tab',
          rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'filename', tot: 'msg' }],
          wires: [['delivered']],
        },
        logTo('delivered', delivered), // the path of the file put in place
        { id: 'on-error', type: 'catch', z: 'tab', scope: null, uncaught: false, wires: [['reason']] },
        {
          id: 'reason',
          type: 'change',
          z: 'tab',
          rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'error.message', tot: 'msg' }],
          wires: [['caught']],
        },
        logTo('caught', caught),
      ];

      const first = await startNodeRed(userDir, port, { after, name: 'ep.wav' });
      const deployed = await request(`${first.base}/flows`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
        body: JSON.stringify(flows),
      });
      assert.equal(deployed.statusCode, 204, await deployed.body.text());
      const killed = once(first.child, 'exit');
      // The inject node answers once the deployed flow has started.
      for (let i = 0; ; i++) {
        const injected = await request(`${first.base}/inject/go`, { method: 'POST' });
        await injected.body.dump();
        if (injected.statusCode === 200) break;
        if (i > 100) assert.fail(`the inject node answers ${injected.statusCode}:\n${first.output()}`);
        await sleep(100);
      }
      const [, signal] = (await Promise.race([
        killed,
        sleep(60_000).then(() => {
          throw new Error(`Node-RED was not killed at the seam:\n${first.output()}`);
        }),
      ])) as [number | null, string | null];
      assert.equal(signal, 'SIGKILL', first.output());
      // The crash came where it was meant to: the file is in place, and for `link` its part is still beside it.
      const placed = (await fsp.readdir(outbox)).sort();
      assert.deepEqual(
        placed.filter((n) => !n.endsWith('.part')),
        ['ep.wav'],
      );
      assert.equal(placed.filter((n) => n.endsWith('.part')).length, after === 'link' ? 1 : 0);
      assert.deepEqual(await linesOf(delivered), [], 'nothing was sent before the crash');

      const second = await startNodeRed(userDir, port);
      try {
        const deadline = Date.now() + 60_000;
        while ((await linesOf(delivered)).length + (await linesOf(caught)).length === 0) {
          if (Date.now() > deadline) assert.fail(`nothing delivered after the restart:\n${second.output()}`);
          await sleep(200);
        }
        await sleep(1_500); // a second message would arrive meanwhile
        assert.deepEqual(await linesOf(caught), [], 'nothing caught');
        assert.deepEqual(
          await linesOf(delivered),
          [join(outbox, 'ep.wav')],
          'the file is handed on once, under its name',
        );
        assert.deepEqual(await fsp.readdir(outbox), ['ep.wav'], 'no numbered copy, no part file');
        const original = await fsp.readFile(input);
        assert.ok((await fsp.readFile(join(outbox, 'ep.wav'))).equals(original), 'the file is whole');
      } finally {
        const exited = once(second.child, 'exit');
        second.child.kill('SIGKILL');
        await exited;
      }
    });
  }
});
