// Files still being written: upload and enhance file read a file given by path only once its size and
// modification time have stopped changing for the node's settle time, as a watch node wired straight
// into them needs (it fires when a copy starts).
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import {
  catchAll,
  helper,
  initHelper,
  loadFlow,
  nextInput,
  remoteConfig,
  sleep,
  statusTexts,
  stopHelper,
  TAB,
} from './flow-helper';

describe('nodes: files still being written', function () {
  this.timeout(60_000);
  let engine: TestEngine;
  let userDir: string;

  before(async () => {
    userDir = await initHelper();
    engine = await startTestEngine();
  });
  after(async () => {
    await stopHelper();
    await engine.dispose();
  });
  afterEach(() => helper.unload());

  const deploy = (node: Record<string, unknown>) =>
    loadFlow(
      [
        TAB,
        remoteConfig(engine.url),
        { id: 'under-test', z: 'tab', service: 'svc', wires: [['out']], ...node },
        { id: 'out', type: 'helper', z: 'tab' },
        ...catchAll(),
      ],
      { svc: { apiKey: engine.apiKey } },
    );
  const uploads = () => engine.requests().filter((entry) => entry.method === 'POST').length;

  it('upload reads a file written slowly over 5 s once, whole, after "waiting for the file to settle"', async () => {
    await deploy({ type: 'media-enhance-upload' }); // the default settle time: 2 s
    const wav = makeWav(4, 16_000);
    const path = join(userDir, 'copying.wav');
    const file = await fsp.open(path, 'w');
    const chunks = 20; // one every 250 ms
    const size = Math.ceil(wav.length / chunks);
    await file.write(wav.subarray(0, size));
    const before = uploads();
    const out = nextInput(helper.getNode('out'), 30_000);
    helper.getNode('under-test').receive({ filename: path });
    for (let i = 1; i < chunks; i++) {
      await sleep(250);
      await file.write(wav.subarray(i * size, (i + 1) * size));
    }
    await file.close();
    const msg = await out;
    assert.equal(uploads() - before, 1, 'read once');
    assert.ok(statusTexts(helper.getNode('under-test')).includes('waiting for the file to settle'));
    const original = await fetch(`${engine.url}/v2/medias/${String(msg.media_uid)}/file?step=PRE`, {
      headers: { 'x-api-key': engine.apiKey },
    });
    assert.ok(Buffer.from(await original.arrayBuffer()).equals(wav), 'the service received the whole file');
  });

  it('enhance file: a file gone while it settles is "no such file", and nothing is sent', async () => {
    await deploy({ type: 'media-enhance-file', output: 'buffer', settle: '1' });
    const path = join(userDir, 'vanishing.wav');
    await fsp.writeFile(path, makeWav(1, 16_000));
    const before = uploads();
    const caught = nextInput(helper.getNode('caught'));
    helper.getNode('under-test').receive({ filename: path });
    await sleep(200);
    await fsp.rm(path);
    const { error } = (await caught) as { error: { code: string; message: string } };
    assert.equal(error.code, 'VALIDATION');
    assert.equal(error.message, `msg.filename: no such file (got ${JSON.stringify(path)})`);
    assert.equal(uploads(), before);
  });

  it('reads a file at once with settle 0, and one last changed longer ago than the settle time', async () => {
    const path = join(userDir, 'at-rest.wav');
    await fsp.writeFile(path, makeWav(1, 16_000));
    await deploy({ type: 'media-enhance-upload', settle: '0' });
    const out = nextInput(helper.getNode('out'));
    helper.getNode('under-test').receive({ filename: path });
    await out;
    assert.ok(!statusTexts(helper.getNode('under-test')).includes('waiting for the file to settle'));
    await helper.unload();
    const past = new Date(Date.now() - 10_000);
    await fsp.utimes(path, past, past);
    await deploy({ type: 'media-enhance-upload', settle: '5' });
    const again = nextInput(helper.getNode('out'));
    helper.getNode('under-test').receive({ filename: path });
    await again;
    assert.ok(!statusTexts(helper.getNode('under-test')).includes('waiting for the file to settle'));
  });

  it('refuses a settle time that is not 0 to 60 seconds, naming the setting', async () => {
    await deploy({ type: 'media-enhance-upload', settle: 'soon' });
    const caught = nextInput(helper.getNode('caught'));
    helper.getNode('under-test').receive({ payload: makeWav(1, 16_000) });
    const { error } = (await caught) as { error: { message: string } };
    assert.equal(
      error.message,
      'setting "wait for the file to settle": must be a number of seconds from 0 (do not wait) to 60 (got "soon")',
    );
  });
});
