// The package as a user installs it: `npm pack`, unpacked into a Node-RED user directory, and the real
// Node-RED runtime and admin API started as a separate process. It must register the eight nodes with
// their icons and help, keep the API key out of the saved and exported flows, run a flow, and resume a wait
// after the process is killed and started again.
import assert from 'node:assert/strict';
import { type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import {
  PACKAGE_NAME as MODULE,
  ROOT as REPO,
  packPackage,
  spawnNodeRed,
  unpackPackage,
  waitForNodeRed,
} from '../fixtures/node-red-process';
import { EDITOR_SCRIPT_FILE, editorScriptSrc } from '../../src/editor/editor-script';
import { freePort } from '../fixtures/free-port';
import { makeWav } from '../fixtures/media';

const TYPES = ['config', 'file', 'audio', 'video', 'upload', 'wait', 'download', 'stream'].map(
  (t) => `media-enhance-${t}`,
);

describe('the packed package in a real Node-RED', function () {
  this.timeout(120_000);
  // Inside the repository, so the unpacked package finds its dependencies in the repository's node_modules.
  let userDir: string;
  let base: string;
  let port: number;
  let nodeRed: ChildProcess;
  let output = '';

  before(async () => {
    await fsp.mkdir(join(REPO, 'test-artifacts'), { recursive: true });
    userDir = await fsp.mkdtemp(join(REPO, 'test-artifacts', 'node-red-'));
    unpackPackage(packPackage(userDir), userDir);
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    await writeSettings('');
    await startNodeRed();
  });

  /** settings.js; `more` adds properties (e.g. the built-in engine's tuning). */
  async function writeSettings(more: string): Promise<void> {
    await fsp.writeFile(
      join(userDir, 'settings.js'),
      `module.exports = { uiHost: '127.0.0.1', uiPort: ${port}, credentialSecret: 'test-secret', flowFile: 'flows.json', logging: { console: { level: 'info' } }${more} };\n`,
    );
  }

  async function startNodeRed(): Promise<void> {
    output = '';
    nodeRed = spawnNodeRed(userDir, join(userDir, 'settings.js'));
    nodeRed.stdout!.on('data', (chunk) => (output += chunk));
    nodeRed.stderr!.on('data', (chunk) => (output += chunk));
    await waitForNodeRed(nodeRed, base, () => output);
  }

  /** As a power cut or the OOM killer would: no close handlers run. */
  async function killNodeRed(): Promise<void> {
    const exited = once(nodeRed, 'exit');
    nodeRed.kill('SIGKILL');
    await exited;
  }

  after(async () => {
    if (nodeRed && nodeRed.exitCode === null) {
      nodeRed.kill('SIGINT');
      await once(nodeRed, 'exit');
    }
    if (userDir) await fsp.rm(userDir, { recursive: true, force: true });
  });

  async function get(
    path: string,
    accept = 'application/json',
  ): Promise<{ status: number; text: string; type: string }> {
    const res = await request(`${base}${path}`, { headers: { accept } });
    return { status: res.statusCode, text: await res.body.text(), type: String(res.headers['content-type']) };
  }

  it('registers the eight nodes without error, with their editor, help and icons', async () => {
    const nodes = JSON.parse((await get('/nodes')).text) as {
      module: string;
      types: string[];
      err?: string;
      enabled: boolean;
    }[];
    const ours = nodes.filter((set) => set.module === MODULE);
    assert.deepEqual(ours.flatMap((set) => set.types).sort(), [...TYPES].sort());
    for (const set of ours) assert.equal(set.err, undefined, `${set.types.join(',')}: ${set.err}`);
    const html = (await get('/nodes', 'text/html')).text;
    for (const type of TYPES) {
      assert.ok(html.includes(`RED.nodes.registerType('${type}'`), `${type} editor`);
      assert.ok(html.includes(`data-help-name="${type}"`), `${type} help`);
    }
    for (const type of TYPES.filter((t) => t !== 'media-enhance-config')) {
      const icon = await get(`/icons/${MODULE}/${type}.svg`, '*/*');
      assert.equal(icon.status, 200, `${type} icon`);
      assert.match(icon.type, /svg/);
    }
    const messages = JSON.parse((await get(`/nodes/messages?lng=en-US`)).text) as Record<string, unknown>;
    assert.ok(JSON.stringify(messages).includes('"paletteLabel":"wait for completion"'));
  });

  it('serves the editor script that every node file loads, as JavaScript', async () => {
    const html = (await get('/nodes', 'text/html')).text;
    const src = editorScriptSrc(MODULE);
    assert.equal(html.split(`<script src="${src}"></script>`).length - 1, TYPES.length, 'each node file loads it');
    const script = await get(`/${src}`, '*/*');
    assert.equal(script.status, 200);
    assert.match(script.type, /javascript/);
    assert.equal(script.text, await fsp.readFile(join(REPO, 'resources', EDITOR_SCRIPT_FILE), 'utf8'));
  });

  it('keeps the API key out of the exported and saved flows, and out of the log', async () => {
    const key = 'remote-key-4d1e8b2a9c';
    const flows = [
      { id: 'tab', type: 'tab', label: 'keys' },
      {
        id: 'svc',
        type: 'media-enhance-config',
        name: 'remote',
        mode: 'remote',
        baseUrl: 'https://127.0.0.1:9',
        credentials: { apiKey: key },
      },
      { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', x: 200, y: 100, wires: [[]] },
    ];
    const deployed = await request(`${base}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
      body: JSON.stringify(flows),
    });
    assert.equal(deployed.statusCode, 204, await deployed.body.text());
    const exported = await get('/flows');
    assert.ok(exported.text.includes('media-enhance-config'));
    assert.ok(!exported.text.includes(key), 'GET /flows');
    const credentials = await get('/credentials/media-enhance-config/svc');
    // The Redis password of shared limits is a credential too, here unset.
    assert.deepEqual(JSON.parse(credentials.text), { has_apiKey: true, has_redisPassword: false });
    assert.ok(!(await fsp.readFile(join(userDir, 'flows.json'), 'utf8')).includes(key), 'flows.json');
    assert.ok(
      !(await fsp.readFile(join(userDir, 'flows_cred.json'), 'utf8')).includes(key),
      'flows_cred.json is encrypted',
    );
    assert.ok(!output.includes(key), 'the log');
  });

  it('runs inject -> upload -> wait -> download on the built-in engine', async () => {
    const input = join(userDir, 'take-1.wav');
    await fsp.writeFile(input, makeWav(1, 16_000));
    const flows = [
      { id: 'tab', type: 'tab', label: 'pipeline' },
      { id: 'svc', type: 'media-enhance-config', name: 'local', mode: 'local' },
      {
        id: 'go',
        type: 'inject',
        z: 'tab',
        props: [{ p: 'filename', v: input, vt: 'str' }],
        repeat: '',
        once: false,
        x: 100,
        y: 100,
        wires: [['upload']],
      },
      {
        id: 'upload',
        type: 'media-enhance-upload',
        z: 'tab',
        service: 'svc',
        loudnessTarget: '-16',
        truePeak: '-1',
        enhancementLevel: '100',
        model: 'LARK_V2',
        transcode: '',
        x: 300,
        y: 100,
        wires: [['wait']],
      },
      {
        id: 'wait',
        type: 'media-enhance-wait',
        z: 'tab',
        service: 'svc',
        timeout: '60',
        x: 500,
        y: 100,
        wires: [['download']],
      },
      {
        id: 'download',
        type: 'media-enhance-download',
        z: 'tab',
        service: 'svc',
        step: 'ENHANCED',
        output: 'file',
        folder: 'outbox',
        fileName: '',
        x: 700,
        y: 100,
        wires: [[]],
      },
    ];
    const deployed = await request(`${base}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
      body: JSON.stringify(flows),
    });
    assert.equal(deployed.statusCode, 204, await deployed.body.text());
    await new Promise((r) => setTimeout(r, 1_000));
    const injected = await request(`${base}/inject/go`, { method: 'POST' });
    assert.equal(injected.statusCode, 200, await injected.body.text());
    const deadline = Date.now() + 30_000;
    let written: string[] = [];
    while (Date.now() < deadline) {
      // A relative folder is under Node-RED's working folder, here its user directory.
      written = await fsp.readdir(join(userDir, 'outbox')).catch(() => []);
      if (written.some((f) => f.endsWith('.wav'))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(
      written.some((f) => f.endsWith('.wav')),
      `an output file appears (log:\n${output.slice(-2000)})`,
    );
    assert.match(output, /built-in local engine listening on http:\/\/127\.0\.0\.1:\d+/);
  });

  it("shows its statuses from the package's message catalogs: English, or a translation added as one JSON file", async () => {
    const input = join(userDir, 'take-2.wav');
    await fsp.writeFile(input, makeWav(1, 16_000));
    const shown = join(userDir, 'statuses.jsonl');
    const inject = (id: string, props: object[]) => ({
      id,
      type: 'inject',
      z: 'tab',
      props,
      repeat: '',
      once: false,
      x: 100,
      y: 100,
      wires: [['upload']],
    });
    const flows = [
      { id: 'tab', type: 'tab', label: 'statuses' },
      { id: 'svc', type: 'media-enhance-config', name: 'local', mode: 'local' },
      inject('good', [{ p: 'filename', v: input, vt: 'str' }]),
      inject('bad', [{ p: 'payload', v: 'not a file', vt: 'str' }]),
      { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', x: 300, y: 100, wires: [[]] },
      // A Status node writes each status text of the upload node to a file, one a line.
      { id: 'watch', type: 'status', z: 'tab', scope: ['upload'], x: 100, y: 200, wires: [['record']] },
      {
        id: 'record',
        type: 'function',
        z: 'tab',
        x: 300,
        y: 200,
        wires: [['append']],
        func: 'msg.payload = msg.status.text; return msg;',
      },
      {
        id: 'append',
        type: 'file',
        z: 'tab',
        filename: shown,
        filenameType: 'str',
        appendNewline: true,
        createDir: true,
        overwriteFile: 'false',
        encoding: 'none',
        x: 500,
        y: 200,
        wires: [],
      },
    ];
    const deployed = await request(`${base}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
      body: JSON.stringify(flows),
    });
    assert.equal(deployed.statusCode, 204, await deployed.body.text());
    const texts = async () => (await fsp.readFile(shown, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    const injectAndSee = async (id: string, shows: string) => {
      await new Promise((r) => setTimeout(r, 1_000));
      assert.equal((await request(`${base}/inject/${id}`, { method: 'POST' })).statusCode, 200);
      const deadline = Date.now() + 30_000;
      while (!(await texts()).includes(shows)) {
        if (Date.now() > deadline) throw new Error(`no "${shows}" in ${JSON.stringify(await texts())}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await injectAndSee('good', 'done');
    await injectAndSee('bad', 'invalid input');
    assert.equal((await texts())[0], 'starting');
    assert.ok(!(await texts()).some((text) => text.includes('media-enhance')), 'no key shows instead of its text');

    // A translation is a new file in the installed package; settings.js chooses the language. Dutch,
    // which Node-RED itself does not speak: its log stays English, as waitForNodeRed reads it.
    const dutch = join(userDir, 'node_modules', ...MODULE.split('/'), 'nodes', 'locales', 'nl');
    try {
      await fsp.mkdir(dutch);
      const catalog = { 'media-enhance': { status: { done: 'klaar' } } };
      await fsp.writeFile(join(dutch, 'media-enhance-config.json'), JSON.stringify(catalog));
      await writeSettings(`, lang: 'nl'`);
      await killNodeRed();
      await startNodeRed();
      await fsp.rm(shown);
      await injectAndSee('good', 'klaar');
      // What the translation leaves out is English.
      assert.equal((await texts())[0], 'starting');
    } finally {
      await fsp.rm(dutch, { recursive: true, force: true });
      await writeSettings('');
    }
  });

  it('a wait cut by killing Node-RED resumes after the restart: the message arrives once, with its properties', async () => {
    // The media stays in processing long enough to kill Node-RED while its wait is open.
    await writeSettings(`, mediaEnhance: { engine: { processingDelayMs: 5000 } }`);
    await killNodeRed();
    await startNodeRed();
    const input = join(userDir, 'interview.wav');
    await fsp.writeFile(input, makeWav(1, 16_000));
    const arrived = join(userDir, 'arrived.jsonl');
    const flows = [
      { id: 'tab', type: 'tab', label: 'restart' },
      { id: 'svc', type: 'media-enhance-config', name: 'local', mode: 'local' },
      {
        id: 'go',
        type: 'inject',
        z: 'tab',
        props: [
          { p: 'filename', v: input, vt: 'str' },
          { p: 'episode', v: '42', vt: 'num' },
        ],
        repeat: '',
        once: false,
        x: 100,
        y: 100,
        wires: [['upload']],
      },
      {
        id: 'upload',
        type: 'media-enhance-upload',
        z: 'tab',
        service: 'svc',
        loudnessTarget: '-16',
        truePeak: '-1',
        enhancementLevel: '100',
        model: 'LARK_V2',
        transcode: '',
        x: 300,
        y: 100,
        wires: [['wait']],
      },
      {
        id: 'wait',
        type: 'media-enhance-wait',
        z: 'tab',
        service: 'svc',
        timeout: '120',
        x: 500,
        y: 100,
        wires: [['record']],
      },
      {
        id: 'record',
        type: 'function',
        z: 'tab',
        x: 700,
        y: 100,
        wires: [['append']],
        func: 'msg.payload = JSON.stringify({ msgid: msg._msgid, uid: msg.media_uid, episode: msg.episode, state: msg.payload.enhancement_status }); return msg;',
      },
      {
        id: 'append',
        type: 'file',
        z: 'tab',
        filename: arrived,
        filenameType: 'str',
        appendNewline: true,
        createDir: true,
        overwriteFile: 'false',
        encoding: 'none',
        x: 900,
        y: 100,
        wires: [],
      },
    ];
    const deployed = await request(`${base}/flows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
      body: JSON.stringify(flows),
    });
    assert.equal(deployed.statusCode, 204, await deployed.body.text());
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal((await request(`${base}/inject/go`, { method: 'POST' })).statusCode, 200);

    const journal = join(userDir, 'media-enhance', 'svc', 'kept', 'wait');
    const kept = async () =>
      (await fsp.readdir(journal).catch(() => [] as string[])).filter((f) => f.endsWith('.json'));
    const deadline = Date.now() + 20_000;
    while ((await kept()).length === 0) {
      if (Date.now() > deadline) throw new Error(`the wait was never kept (log:\n${output.slice(-2000)})`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const entry = JSON.parse(await fsp.readFile(join(journal, (await kept())[0]), 'utf8')) as {
      mediaUid: string;
      msg: { _msgid: string };
    };
    await killNodeRed();
    await startNodeRed();

    let lines: string[] = [];
    const arrivedBy = Date.now() + 60_000;
    while (lines.length === 0 && Date.now() < arrivedBy) {
      lines = (await fsp.readFile(arrived, 'utf8').catch(() => '')).split('\n').filter(Boolean);
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 3_000)); // a second delivery would land meanwhile
    lines = (await fsp.readFile(arrived, 'utf8')).split('\n').filter(Boolean);
    assert.equal(lines.length, 1, `one message, not ${lines.length} (log:\n${output.slice(-2000)})`);
    assert.deepEqual(JSON.parse(lines[0]), {
      msgid: entry.msg._msgid,
      uid: entry.mediaUid,
      episode: 42,
      state: 'COMPLETED',
    });
    assert.deepEqual(await kept(), [], 'the journal entry ended with the message');
    assert.match(output, /resuming 1 message\(s\)/);
  });
});
