// The files enhance file and download write, as a careless user's flow meets them on the built-in engine
// over loopback: the input is never replaced, an existing file only when the node says "overwrite",
// two messages racing for one name get two files, and a name that cannot be written is refused before
// anything is sent (nothing reaches the service), with local file errors under code FILE.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { renderDetail } from '../../src/editor/sidebar/render-detail';
import type { AccessLogEntry } from '../../src/engine';
import { sidebarRegistry } from '../../src/sidebar/registry';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import {
  catchAll,
  collect,
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

type Caught = { error: { message: string; code?: string }; [key: string]: unknown };

describe('nodes: the files enhance file and download write', function () {
  this.timeout(60_000);
  let engine: TestEngine;
  let userDir: string;
  /** Told of each request the engine answered (a test sets it to act between the upload and the download). */
  let onEngineRequest: ((entry: AccessLogEntry) => void) | undefined;
  const input = makeWav(1, 16_000);

  before(async () => {
    userDir = await initHelper();
    engine = await startTestEngine({ onRequest: (entry) => onEngineRequest?.(entry) });
  });
  after(async () => {
    await stopHelper();
    await engine.dispose();
  });
  afterEach(() => {
    onEngineRequest = undefined;
    return helper.unload();
  });

  /** Deploys the node under test alone (what a test deployed before is unloaded first). */
  async function deploy(node: Record<string, unknown>): Promise<void> {
    await helper.unload();
    await loadFlow(
      [
        TAB,
        remoteConfig(engine.url),
        { id: 'under-test', z: 'tab', service: 'svc', wires: [['out']], output: 'file', ...node },
        { id: 'out', type: 'helper', z: 'tab' },
        ...catchAll(),
      ],
      { svc: { apiKey: engine.apiKey } },
    );
  }

  /** A fresh folder under the user folder, holding `files` (name -> content). */
  async function folderWith(name: string, files: Record<string, string | Buffer> = {}): Promise<string> {
    const folder = join(userDir, name);
    await fsp.rm(folder, { recursive: true, force: true });
    await fsp.mkdir(folder, { recursive: true });
    for (const [file, content] of Object.entries(files)) await fsp.writeFile(join(folder, file), content);
    return folder;
  }

  const send = (msg: Record<string, unknown>) => helper.getNode('under-test').receive(msg);

  /** Sends `msg`, expects it at Catch, and that it reached the service not at all. */
  async function refusedBeforeSending(msg: Record<string, unknown>): Promise<Caught['error']> {
    const before = engine.requests().length;
    const caught = nextInput(helper.getNode('caught'));
    const out = collect(helper.getNode('out'));
    send(msg);
    const { error } = (await caught) as Caught;
    assert.equal(engine.requests().length, before, 'nothing reached the service');
    assert.deepEqual(out, []);
    return error;
  }

  describe('enhance file', () => {
    it('never replaces its input: outputFilename = the input\'s name in its own folder gives "in (1).wav"', async () => {
      const outbox = await folderWith('outbox', { 'in.wav': input });
      await deploy({ type: 'media-enhance-file', folder: 'outbox' });
      const out = nextInput(helper.getNode('out'));
      send({ filename: 'outbox/in.wav', outputFilename: 'in.wav' });
      const msg = await out;
      assert.equal(msg.filename, join(outbox, 'in (1).wav'));
      assert.ok((await fsp.readFile(join(outbox, 'in.wav'))).equals(input), 'the input is as it was');
      assert.deepEqual((await fsp.readdir(outbox)).sort(), ['in (1).wav', 'in.wav']);
    });

    it('with "overwrite", still never replaces its input: FILE before anything is sent', async () => {
      const outbox = await folderWith('outbox', { 'in.wav': input });
      await deploy({ type: 'media-enhance-file', folder: 'outbox', ifExists: 'overwrite' });
      const error = await refusedBeforeSending({ filename: 'outbox/in.wav', outputFilename: 'in.wav' });
      assert.equal(error.code, 'FILE');
      assert.ok(error.message.includes(join(outbox, 'in.wav')), error.message);
      assert.match(error.message, /is the input file: it is never replaced/);
      assert.ok((await fsp.readFile(join(outbox, 'in.wav'))).equals(input));
    });

    it('keeps an existing file by default (a numbered name), errs with "error", replaces with "overwrite" (msg.ifExists)', async () => {
      const named = await folderWith('named', { 'talk.wav': 'an earlier episode' });
      await deploy({ type: 'media-enhance-file', folder: 'named', fileName: 'talk.wav' });
      const out = nextInput(helper.getNode('out'));
      send({ payload: input, filename: 'memo.wav' });
      assert.equal((await out).filename, join(named, 'talk (1).wav'));
      assert.equal(await fsp.readFile(join(named, 'talk.wav'), 'utf8'), 'an earlier episode');

      const error = await refusedBeforeSending({ payload: input, filename: 'memo.wav', ifExists: 'error' });
      assert.equal(error.code, 'FILE');
      assert.ok(error.message.includes(join(named, 'talk.wav')), error.message);
      assert.match(error.message, /already exists and is not replaced/);

      const replaced = nextInput(helper.getNode('out'));
      send({ payload: input, filename: 'memo.wav', ifExists: 'overwrite' });
      assert.equal((await replaced).filename, join(named, 'talk.wav'));
      assert.notEqual(await fsp.readFile(join(named, 'talk.wav'), 'utf8'), 'an earlier episode');
      assert.deepEqual((await fsp.readdir(named)).sort(), ['talk (1).wav', 'talk.wav']);

      const bad = await refusedBeforeSending({ payload: input, filename: 'memo.wav', ifExists: 'replace' });
      assert.equal(bad.code, 'VALIDATION');
      assert.equal(bad.message, 'msg.ifExists: must be one of number, error, overwrite (got "replace")');
    });

    it('gives two messages racing for one name two files', async () => {
      const race = await folderWith('race');
      await deploy({ type: 'media-enhance-file', folder: 'race' });
      const out = collect(helper.getNode('out'));
      send({ payload: input, filename: 'a.wav', outputFilename: 'same.wav' });
      send({ payload: input, filename: 'b.wav', outputFilename: 'same.wav' });
      const deadline = Date.now() + 30_000;
      while (out.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(out.map((m) => m.filename).sort(), [join(race, 'same (1).wav'), join(race, 'same.wav')]);
      assert.deepEqual((await fsp.readdir(race)).sort(), ['same (1).wav', 'same.wav']);
    });

    it('refuses before anything is sent a msg.outputFilename with a newline or a control character', async () => {
      await folderWith('named');
      await deploy({ type: 'media-enhance-file', folder: 'named' });
      for (const name of ['two\nlines.wav', 'ends-with-newline.wav\n', 'tab\there.wav', 'bell\u0007.wav']) {
        const error = await refusedBeforeSending({ payload: input, filename: 'memo.wav', outputFilename: name });
        assert.equal(error.code, 'VALIDATION');
        assert.equal(
          error.message,
          `msg.outputFilename: must be a file name without control characters (newline, tab, ...) (got ${JSON.stringify(name)})`,
        );
      }
      assert.deepEqual(await fsp.readdir(join(userDir, 'named')), []);
    });

    it('refuses before anything is sent a msg.outputFilename over 255 bytes, counted in UTF-8', async () => {
      await deploy({ type: 'media-enhance-file', folder: 'named' });
      const name = 'é'.repeat(200); // 200 characters, 400 bytes
      const error = await refusedBeforeSending({ payload: input, filename: 'memo.wav', outputFilename: name });
      assert.equal(error.code, 'VALIDATION');
      assert.match(
        error.message,
        /^msg\.outputFilename: must be a file name of at most 255 bytes in UTF-8 \(this one has 400 bytes in 200 characters\)/,
      );
      // 127 × "é" and ".wav" is 258 bytes: refused too; 125 × "é" and ".wav" (254 bytes) is written.
      assert.equal(
        (await refusedBeforeSending({ payload: input, outputFilename: `${'é'.repeat(127)}.wav` })).code,
        'VALIDATION',
      );
      await folderWith('named');
      const out = nextInput(helper.getNode('out'));
      send({ payload: input, filename: 'memo.wav', outputFilename: `${'é'.repeat(125)}.wav` });
      assert.equal((await out).filename, join(userDir, 'named', `${'é'.repeat(125)}.wav`));
    });

    it('refuses before anything is sent a name that is an existing folder, and writes nothing inside it', async () => {
      const named = await folderWith('named');
      await fsp.mkdir(join(named, 'podcast.wav'));
      await deploy({ type: 'media-enhance-file', folder: 'named' });
      const error = await refusedBeforeSending({ payload: input, filename: 'memo.wav', outputFilename: 'podcast.wav' });
      assert.equal(error.code, 'VALIDATION');
      assert.equal(
        error.message,
        `msg.outputFilename: names a folder (${join(named, 'podcast.wav')}), not a file (got "podcast.wav")`,
      );
      assert.deepEqual(await fsp.readdir(join(named, 'podcast.wav')), []);
    });

    it('refuses before anything is sent a folder that is a file, or lies under one, naming the setting, the value and the rule', async () => {
      const blocked = await folderWith('blocked', { 'notes.txt': 'x' });
      for (const folder of ['blocked/notes.txt', 'blocked/notes.txt/out', 'blocked/notes.txt/out/deeper']) {
        await deploy({ type: 'media-enhance-file', folder });
        const error = await refusedBeforeSending({ payload: input, filename: 'memo.wav' });
        assert.equal(error.code, 'VALIDATION');
        assert.equal(
          error.message,
          `setting "folder": must be a folder that Node-RED can write to, or make (${join(blocked, 'notes.txt')} is a file) (got ${JSON.stringify(folder)})`,
        );
        // The status says what is wrong, not only "error" (it is shown after the message reached Catch).
        const deadline = Date.now() + 5_000;
        while (statusTexts(helper.getNode('under-test')).at(-1) === 'starting' && Date.now() < deadline)
          await sleep(20);
        assert.equal(statusTexts(helper.getNode('under-test')).at(-1), 'invalid settings');
      }
      assert.equal(await fsp.readFile(join(blocked, 'notes.txt'), 'utf8'), 'x');
    });

    it('refuses before anything is sent a folder that Node-RED cannot write to', async function () {
      if (process.getuid?.() === 0) this.skip(); // root writes everywhere: no folder can be refused to it
      const locked = await folderWith('locked');
      await fsp.chmod(locked, 0o500);
      try {
        await deploy({ type: 'media-enhance-file', folder: 'locked/out' });
        const error = await refusedBeforeSending({ payload: input, filename: 'memo.wav' });
        assert.equal(error.code, 'VALIDATION');
        assert.match(
          error.message,
          /^setting "folder": must be a folder that Node-RED can write to, or make \(.* is not writable\)/,
        );
      } finally {
        await fsp.chmod(locked, 0o700);
      }
    });

    it('takes "~/" in the folder setting for the home folder, not a folder named "~" in the user folder', async () => {
      const home = await folderWith('home-of-the-user');
      const homeWas = process.env.HOME;
      process.env.HOME = home;
      try {
        await deploy({ type: 'media-enhance-file', folder: '~/podcasts/out' });
        const out = nextInput(helper.getNode('out'));
        send({ payload: input, filename: 'memo.wav', outputFilename: 'episode.wav' });
        assert.equal((await out).filename, join(home, 'podcasts', 'out', 'episode.wav'));
        await assert.rejects(fsp.stat(join(userDir, '~')), { code: 'ENOENT' });
      } finally {
        process.env.HOME = homeWas;
      }
    });

    it('says, when the file cannot be written after processing, the media uid and that the enhanced file can still be had', async () => {
      const late = await folderWith('late');
      await deploy({ type: 'media-enhance-file', folder: 'late/out' });
      // The folder passes the check on arrival; a file takes its place while the media is processed.
      onEngineRequest = (entry) => {
        if (entry.method === 'POST' && entry.status < 300) void fsp.writeFile(join(late, 'out'), 'in the way');
      };
      const caught = nextInput(helper.getNode('caught'));
      send({ payload: input, filename: 'memo.wav' });
      const { error } = (await caught) as Caught;
      assert.equal(error.code, 'FILE', error.message);
      const media = /^media (\S+) was enhanced, but its file could not be written: .*(?:ENOTDIR|EEXIST)/.exec(
        error.message,
      );
      assert.ok(media, error.message);
      assert.match(error.message, /The enhanced file can still be had: from its row in the media enhance sidebar/);
      const enhanced = await fetch(`${engine.url}/v2/medias/${media[1]}/file?step=ENHANCED`, {
        headers: { 'x-api-key': engine.apiKey },
      });
      assert.equal(enhanced.status, 200, 'the enhanced file is there to download');
      await enhanced.arrayBuffer();
      // The sidebar's result row offers the enhanced file, not only the original.
      const row = sidebarRegistry.snapshot().results.find((result) => result.uid === media[1]);
      assert.equal(row?.outcome, 'failed');
      assert.equal(row?.enhancedReady, true);
      const detail = renderDetail(
        (key) => key,
        { result: row, metadata: null, loudness: null, loudnessOffered: false },
        {
          width: 300,
          height: 150,
        },
      );
      assert.match(detail, /class="me-download-enhanced"/);
    });

    it('refuses at deploy a file name setting with a control character, over 255 bytes, or an unknown ifExists', async () => {
      for (const [node, says] of [
        [{ fileName: 'a\nb.wav' }, /setting "file name": must be a file name without control characters/],
        [{ fileName: 'é'.repeat(200) }, /setting "file name": must be a file name of at most 255 bytes/],
        [
          { ifExists: 'replace' },
          /setting "if the file exists": must be one of number, error, overwrite \(got "replace"\)/,
        ],
      ] as const) {
        await deploy({ type: 'media-enhance-file', folder: 'named', ...node });
        const error = await refusedBeforeSending({ payload: input, filename: 'memo.wav' });
        assert.equal(error.code, 'VALIDATION');
        assert.match(error.message, says);
      }
    });
  });

  describe('download', () => {
    it('keeps an existing file by default, and errs with the setting "error", naming the file', async () => {
      const uploaded = await fetchUid();
      const folder = await folderWith('downloads', { 'talk.wav': 'an earlier episode' });
      await deploy({ type: 'media-enhance-download', folder: 'downloads', fileName: 'talk.wav', step: 'PRE' });
      const out = nextInput(helper.getNode('out'));
      send({ media_uid: uploaded });
      assert.equal((await out).filename, join(folder, 'talk (1).wav'));
      assert.ok((await fsp.readFile(join(folder, 'talk (1).wav'))).equals(input));
      assert.equal(await fsp.readFile(join(folder, 'talk.wav'), 'utf8'), 'an earlier episode');

      await deploy({
        type: 'media-enhance-download',
        folder: 'downloads',
        fileName: 'talk.wav',
        step: 'PRE',
        ifExists: 'error',
      });
      const error = await refusedBeforeSending({ media_uid: uploaded });
      assert.equal(error.code, 'FILE');
      assert.ok(error.message.includes(join(folder, 'talk.wav')), error.message);
      assert.deepEqual((await fsp.readdir(folder)).sort(), ['talk (1).wav', 'talk.wav']);
    });

    /** A media uploaded straight to the engine, whose original (PRE) a download node can fetch. */
    async function fetchUid(): Promise<string> {
      const form = new FormData();
      form.append('file', new Blob([Uint8Array.from(input)]), 'take.wav');
      const res = await fetch(`${engine.url}/v2/medias`, {
        method: 'POST',
        body: form,
        headers: { 'x-api-key': engine.apiKey },
      });
      assert.ok(res.ok, await res.clone().text());
      return ((await res.json()) as { uid: string }).uid;
    }
  });
});
