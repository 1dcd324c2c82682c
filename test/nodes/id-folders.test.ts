// Node and config ids name folders: whatever a hand-made or imported flow holds (`.`, `..`, `a:b`), the
// journals and the built-in engine's store stay in folders of their own, one per id, and never touch
// the user folder or anything beside them. A node keeps its journal across redeploys and restarts under
// any id, and one written under an earlier version's folder name is still resumed.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { makeWav } from '../fixtures/media';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  localConfig,
  placed,
  remoteConfig,
  sleep,
  stopHelper,
  TAB,
  unloadFlow,
} from './flow-helper';

describe('nodes: ids as folder names', function () {
  this.timeout(90_000);
  let engine: TestEngine;
  let userDir: string;
  const credentials = () => ({ svc: { apiKey: engine.apiKey } });
  const keptDir = () => join(userDir, 'media-enhance', 'svc', 'kept');
  const exists = (path: string) =>
    fsp.lstat(path).then(
      () => true,
      () => false,
    );

  before(async () => {
    userDir = await initHelper();
    // Each media stays PROCESSING 4 s: a restart made within the first two (the message kept, the flow
    // stopped) finds it unfinished, so the message can only come out of the resumed journal; a message
    // sent before the restart is never collected, and the test fails.
    engine = await startTestEngine({ processingDelayMs: 4_000, limits: { uploadMedia: null, getMetadata: null } });
  });
  after(async () => {
    await stopHelper();
    await engine.dispose();
  });
  afterEach(unloadFlow);

  async function until(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await sleep(100);
    }
  }

  async function upload(): Promise<string> {
    const { MediaEnhanceClient } = await import('../../src/client');
    const client = new MediaEnhanceClient({
      baseUrl: engine.url,
      apiKey: engine.apiKey,
      limits: { uploadMedia: null },
    });
    try {
      return (await client.uploadMedia({ file: makeWav(0.2, 8000) })).uid;
    } finally {
      await client.close();
    }
  }

  const entriesIn = async (folder: string) =>
    (await fsp.readdir(folder).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));

  function waitFlow(ids: string[]): object[] {
    return [
      TAB,
      remoteConfig(engine.url),
      ...ids.map((id) => ({ id, type: 'media-enhance-wait', z: 'tab', service: 'svc', wires: [['completed']] })),
      { id: 'completed', type: 'helper', z: 'tab' },
      ...catchAll(),
    ];
  }

  it('config and media nodes with ids ".." and "." leave the user folder and a sibling media/podcast/ folder intact', async () => {
    const own = {
      'settings.js': 'module.exports = {}\n',
      'flows.json': '[]\n',
      [join('media', 'podcast', 'episode-1.wav')]: 'a recording',
      [join('node_modules', 'kept.txt')]: 'a module',
    };
    for (const [path, text] of Object.entries(own)) {
      await fsp.mkdir(join(userDir, path, '..'), { recursive: true });
      await fsp.writeFile(join(userDir, path), text);
    }
    const flow = () => [
      TAB,
      localConfig('..'),
      localConfig('.'),
      { id: '..', type: 'media-enhance-wait', z: 'tab', service: '..', keepAcrossRestarts: false, wires: [[]] },
      { id: '.', type: 'media-enhance-download', z: 'tab', service: '.', keepAcrossRestarts: false, wires: [[]] },
      { id: 'keeping', type: 'media-enhance-wait', z: 'tab', service: '..', wires: [[]] },
    ];
    await loadFlow(flow());
    const engines = join(userDir, 'media-enhance-data');
    await until(
      async () => (await exists(join(engines, '%2E%2E', 'media'))) && (await exists(join(engines, '%2E', 'media'))),
      'both built-in engines have opened their stores',
    );
    await helper.setFlows(placed(flow()), 'full');
    await helper.setFlows(placed([TAB]), 'full'); // every node deleted: the sweep runs over their journals
    await sleep(1_500);
    for (const [path, text] of Object.entries(own))
      assert.equal(await fsp.readFile(join(userDir, path), 'utf8'), text, `${path} is intact`);
    assert.deepEqual(
      (await fsp.readdir(engines)).sort(),
      ['%2E', '%2E%2E'],
      'each config node has a store of its own, inside the data folder',
    );
  });

  it('ids "a:b" and "a_b" keep their messages in folders of their own, each resumed once after a restart', async () => {
    await loadFlow(waitFlow(['a:b', 'a_b']), credentials());
    const uids = [await upload(), await upload()];
    helper.getNode('a:b').receive({ media_uid: uids[0], topic: 'colon' });
    helper.getNode('a_b').receive({ media_uid: uids[1], topic: 'underscore' });
    await until(
      async () =>
        (await entriesIn(join(keptDir(), 'a%3Ab'))).length === 1 &&
        (await entriesIn(join(keptDir(), 'a_b'))).length === 1,
      'each message is kept in its node’s own folder',
    );
    await helper.unload();
    await loadFlow(waitFlow(['a:b', 'a_b']), credentials());
    const completed = collect(helper.getNode('completed'));
    await until(() => completed.length === 2, 'both messages arrive');
    await sleep(1_000);
    assert.deepEqual(completed.map((m) => m.topic).sort(), ['colon', 'underscore']);
  });

  it('a node with id "ef:1" keeps its journal across a redeploy and resumes its message after a restart', async () => {
    await loadFlow(waitFlow(['ef:1']), credentials());
    const uid = await upload();
    helper.getNode('ef:1').receive({ media_uid: uid, topic: 'kept' });
    const folder = join(keptDir(), 'ef%3A1');
    await until(async () => (await entriesIn(folder)).length === 1, 'the wait is kept');
    await helper.setFlows(placed(waitFlow(['ef:1'])), 'full', credentials());
    await sleep(1_500); // the deleted-node sweep runs after the deploy
    assert.equal((await entriesIn(folder)).length, 1, 'the sweep left the journal of a deployed node alone');

    await helper.unload(); // a restart before the media is done
    await loadFlow(waitFlow(['ef:1']), credentials());
    const completed = collect(helper.getNode('completed'));
    await until(() => completed.length === 1, 'the message is resumed and arrives');
    assert.equal(completed[0].topic, 'kept');
    assert.equal(completed[0].media_uid, uid);
  });

  it('a journal an earlier version kept under its old folder name ("ef_1" for "ef:1") is moved and resumed', async () => {
    const uid = await upload();
    const legacy = join(keptDir(), 'ef_1');
    await fsp.mkdir(legacy, { recursive: true });
    const entry = {
      mediaUid: uid,
      startedAt: Date.now(),
      mediaSince: Date.now(),
      msg: { media_uid: uid, topic: 'old' },
      dropped: [],
    };
    await fsp.writeFile(join(legacy, `${Date.now()}-legacy.json`), JSON.stringify(entry));

    await loadFlow(waitFlow(['ef:1']), credentials());
    const completed = collect(helper.getNode('completed'));
    await until(() => completed.length === 1, 'the old message is resumed');
    assert.equal(completed[0].topic, 'old');
    assert.equal(await exists(legacy), false, 'the old folder moved to the new name');
  });
});
