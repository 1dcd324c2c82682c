// A journal holds what a message can carry within a bound, and reads back only what it could have
// written: a planted or damaged file (a FIFO, a link, a huge or deeply nested file, an entry naming a
// part file elsewhere) costs its own entry, with a warning that quotes none of its content.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  journalSafeMessage,
  keptMessageMaxBytes,
  MessageJournal,
  type JournalPlace,
} from '../../src/nodes/message-journal';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { makeWav } from '../fixtures/media';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  placed,
  remoteConfig,
  sleep,
  stopHelper,
  TAB,
} from './flow-helper';

describe('nodes: journal files, bounded and distrusted', function () {
  this.timeout(60_000);
  let base: string;
  let root: string;
  let folder: string;
  let outside: string;
  let downloads: string;
  let place: JournalPlace;

  beforeEach(async () => {
    base = await fsp.mkdtemp(join(tmpdir(), 'me-journal-'));
    root = join(base, 'media-enhance');
    folder = join(root, 'svc', 'kept', 'node');
    outside = join(base, 'outside');
    downloads = join(base, 'downloads');
    for (const dir of [folder, outside, downloads]) await fsp.mkdir(dir, { recursive: true });
    place = { root, partFolders: [downloads], maxMessageBytes: 1024 * 1024 };
  });
  afterEach(() => fsp.rm(base, { recursive: true, force: true }));

  const entry = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({ mediaUid: 'm-1', startedAt: 1, msg: { topic: 'ok' }, dropped: [], ...extra });

  it('a FIFO named like an entry is skipped at once as not a regular file', async () => {
    execFileSync('mkfifo', [join(folder, '1-fifo.json')]);
    await fsp.writeFile(join(folder, '2-good.json'), entry());
    const { kept, unreadable } = await new MessageJournal(folder, place).load();
    assert.deepEqual(
      kept.map((k) => k.entry.msg.topic),
      ['ok'],
    );
    assert.deepEqual(unreadable, ['1-fifo.json: not a regular file (a FIFO)']);
  });

  it('a JSON nested 200,000 deep is refused before it is parsed', async () => {
    const deep = `{"mediaUid":"m","startedAt":1,"msg":{"deep":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`;
    await fsp.writeFile(join(folder, '1-deep.json'), deep);
    const { kept, unreadable } = await new MessageJournal(folder, place).load();
    assert.equal(kept.length, 0);
    assert.deepEqual(unreadable, ['1-deep.json: nested 200002 deep, more than the 100 allowed']);
  });

  it('a file larger than an entry may be is not read', async () => {
    const huge = join(folder, '1-huge.json');
    await fsp.writeFile(huge, '');
    await fsp.truncate(huge, 1.5 * 1024 ** 3); // sparse: 1.5 GB on paper, nothing on disk
    const before = process.memoryUsage().rss;
    const { kept, unreadable } = await new MessageJournal(folder, place).load();
    assert.equal(kept.length, 0);
    assert.match(unreadable[0], /^1-huge\.json: 1610612736 bytes, more than the 1114112 an entry may have$/);
    assert.ok(process.memoryUsage().rss - before < 100 * 1024 ** 2, 'nothing of it was read into memory');
  });

  it('a link to a file outside is not followed, and its content is quoted nowhere', async () => {
    const secret = join(outside, 'passwd');
    await fsp.writeFile(secret, 'root:x:0:0:root:/root:/bin/bash\n');
    await fsp.symlink(secret, join(folder, '1-link.json'));
    await fsp.symlink('/dev/zero', join(folder, '2-zero.json'));
    const { kept, unreadable } = await new MessageJournal(folder, place).load();
    assert.equal(kept.length, 0);
    assert.deepEqual(unreadable, [
      '1-link.json: not a regular file (a link)',
      '2-zero.json: not a regular file (a link)',
    ]);
  });

  it('a damaged entry is named with a reason of the journal’s own, never its text', async () => {
    await fsp.writeFile(join(folder, '1-text.json'), 'root:x:0:0:root:/root:/bin/bash');
    const { unreadable } = await new MessageJournal(folder, place).load();
    assert.deepEqual(unreadable, ['1-text.json: not valid JSON']);
  });

  it('dropping an entry removes its part file only inside the node’s download folders', async () => {
    const victim = join(outside, '.precious.part');
    const ownPart = join(downloads, '.m-1.ENHANCED.part');
    const notAPart = join(downloads, 'talk.wav');
    for (const file of [victim, ownPart, notAPart]) await fsp.writeFile(file, 'data');
    await fsp.writeFile(join(folder, '1-planted.json'), entry({ partFile: victim }));
    await fsp.writeFile(join(folder, '2-own.json'), entry({ partFile: ownPart }));
    await fsp.writeFile(join(folder, '3-named.json'), entry({ partFile: `${notAPart}.part` }));
    await fsp.writeFile(join(folder, 'notes.txt'), 'a person’s note');
    const dropped = await new MessageJournal(folder, place).discard();
    assert.equal(dropped.length, 3);
    assert.equal(await fsp.readFile(victim, 'utf8'), 'data', 'a part file outside the node’s folders stays');
    assert.equal(await fsp.readFile(notAPart, 'utf8'), 'data');
    await assert.rejects(fsp.stat(ownPart), /ENOENT/, 'the node’s own part file goes');
    assert.deepEqual(await fsp.readdir(folder), ['notes.txt'], 'only the entries go, not what a person put there');
  });

  it('a journal folder outside its root is refused before anything is read or removed', () => {
    assert.throws(() => new MessageJournal(join(root, '..'), place), /not inside/);
    assert.throws(() => new MessageJournal(root, place), /not inside/);
  });

  it('a kept message holds at most the bound: the largest properties go first, each named with its size', () => {
    const msg = { media_uid: 'm-1', filename: 'talk.wav', notes: 'n'.repeat(1500), rows: Array(400).fill(1) };
    const { kept, dropped } = journalSafeMessage(msg, 2048);
    assert.deepEqual(kept, { media_uid: 'm-1', filename: 'talk.wav', rows: Array(400).fill(1) });
    assert.deepEqual(dropped, ['notes (1502 bytes as JSON, more than the 2048 bytes a kept message may hold)']);
  });

  it('mediaEnhance.keptMessageMaxBytes sets the bound; a value that cannot be one is named and the default used', () => {
    assert.equal(keptMessageMaxBytes({}), 1024 * 1024);
    assert.equal(keptMessageMaxBytes({ mediaEnhance: { keptMessageMaxBytes: 4096 } }), 4096);
    const warnings: string[] = [];
    assert.equal(
      keptMessageMaxBytes({ mediaEnhance: { keptMessageMaxBytes: '1MB' } }, (w) => warnings.push(w)),
      1048576,
    );
    assert.deepEqual(warnings, [
      'mediaEnhance.keptMessageMaxBytes: "1MB" is not a whole number of bytes of at least 1024; 1048576 is used',
    ]);
  });

  describe('in Node-RED', () => {
    let engine: TestEngine;
    let userDir: string;
    before(async () => {
      userDir = await initHelper();
      engine = await startTestEngine({ processingDelayMs: 3_000, limits: { uploadMedia: null, getMetadata: null } });
    });
    afterEach(() => helper.unload());
    after(async () => {
      await stopHelper();
      await engine.dispose();
    });

    it('a journal entry nested 200,000 deep: Node-RED starts, the node warns naming the file, and nothing goes to Catch', async () => {
      const kept = join(userDir, 'media-enhance', 'svc', 'kept', 'deepwait');
      await fsp.mkdir(kept, { recursive: true });
      const deep = `{"startedAt":1,"msg":{"deep":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`;
      await fsp.writeFile(join(kept, '1-deep.json'), deep);
      await loadFlow(
        [
          TAB,
          remoteConfig(engine.url),
          { id: 'deepwait', type: 'media-enhance-wait', z: 'tab', service: 'svc', wires: [[]] },
          ...catchAll(),
        ],
        { svc: { apiKey: engine.apiKey } },
      );
      const caught = collect(helper.getNode('caught'));
      const node = helper.getNode('deepwait');
      let warnings: string[] = [];
      for (let i = 0; warnings.length === 0 && i < 50; i++) {
        await sleep(100);
        warnings = node.warn.getCalls().map((call) => String(call.args[0]));
      }
      assert.ok(
        warnings.some((w) => w.includes('1-deep.json') && w.includes('nested 200002 deep')),
        warnings.join('\n'),
      );
      await sleep(500);
      assert.equal(caught.length, 0);
    });

    it('a 50 MB string payload is not journaled: the entry stays small and the resumed message names it as dropped', async () => {
      const flow = () => [
        TAB,
        remoteConfig(engine.url),
        { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', wires: [['completed']] },
        { id: 'completed', type: 'helper', z: 'tab' },
        ...catchAll(),
      ];
      const credentials = { svc: { apiKey: engine.apiKey } };
      const { MediaEnhanceClient } = await import('../../src/client');
      const client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
      const uid = (await client.uploadMedia({ file: makeWav(0.2, 8000) })).uid;
      await client.close();
      await loadFlow(flow(), credentials);
      const payload = 'x'.repeat(50 * 1024 * 1024);
      helper.getNode('wait').receive({ media_uid: uid, filename: 'talk.wav', topic: 'big', payload });
      const kept = join(userDir, 'media-enhance', 'svc', 'kept', 'wait');
      let files: string[] = [];
      for (let i = 0; files.length === 0 && i < 100; i++) {
        await sleep(100);
        files = (await fsp.readdir(kept).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));
      }
      assert.equal(files.length, 1, 'the message is kept');
      assert.ok((await fsp.stat(join(kept, files[0]))).size < 4096, 'the entry holds the message without its payload');

      await helper.setFlows(placed(flow()), 'full', credentials);
      const completed = collect(helper.getNode('completed'));
      for (let i = 0; completed.length === 0 && i < 200; i++) await sleep(100);
      assert.equal(completed.length, 1);
      assert.equal(completed[0].topic, 'big');
      assert.equal(completed[0].filename, 'talk.wav');
      assert.deepEqual(completed[0].media_resumed, {
        dropped: [
          `payload (a string of ${payload.length} characters, more than the 1048576 bytes a kept message may hold)`,
        ],
      });
    });
  });
});
