// A batch dropped at once into enhance file is accepted whole: every message comes out, none reaches
// Catch, and the client's connections (so its sockets and open files) stay bounded however large the
// batch. BATCH_MESSAGES sets its size (default 300; `npm run soak:batch` runs 2000: about 50 s on 2 cores).
import assert from 'node:assert/strict';
import { promises as fsp, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { catchAll, collect, helper, initHelper, loadFlow, remoteConfig, sleep, stopHelper, TAB } from './flow-helper';

const MESSAGES = Number(process.env.BATCH_MESSAGES ?? 300);
const COPY_PROCESSOR = join(__dirname, '../../src/engine/processors/copy-processor.js');
const UNLIMITED = { uploadMedia: null, getMetadata: null, downloadFile: null };

/** File descriptors this process holds now (sockets of both ends, files being read or written). */
function openDescriptors(): number {
  return readdirSync('/proc/self/fd').length;
}

describe(`nodes: a batch of ${MESSAGES} messages into enhance file at once`, function () {
  this.timeout(180_000);
  let userDir: string;
  let engine: TestEngine;

  before(async () => {
    userDir = await initHelper();
    // A real engine on loopback that copies what it gets: what is measured is the way there and back.
    engine = await startTestEngine({ limits: UNLIMITED, processorModule: COPY_PROCESSOR });
    await fsp.mkdir(join(userDir, 'inbox'));
    const wav = makeWav(0.05, 8_000);
    for (let i = 0; i < MESSAGES; i++) await fsp.writeFile(join(userDir, 'inbox', `m${i}.wav`), wav);
  });
  after(async () => {
    await stopHelper();
    await engine.dispose();
  });

  it('is accepted whole: every message comes out, none fails, and file descriptors stay bounded', async () => {
    const many = String(10 * MESSAGES);
    await loadFlow(
      [
        TAB,
        remoteConfig(engine.url, { limitUpload: many, limitMetadata: many, limitDownload: many }),
        {
          id: 'file',
          type: 'media-enhance-file',
          z: 'tab',
          service: 'svc',
          output: 'file',
          folder: 'outbox',
          fileName: '',
          // The journal writes each message's entry on arrival, all at once: measured on its own elsewhere.
          keepAcrossRestarts: false,
          wires: [['out']],
        },
        { id: 'out', type: 'helper', z: 'tab' },
        ...catchAll(),
      ],
      { svc: { apiKey: engine.apiKey } },
    );
    const out = collect(helper.getNode('out'));
    const caught = collect(helper.getNode('caught'));
    const before = openDescriptors();
    let peak = before;
    for (let i = 0; i < MESSAGES; i++)
      helper.getNode('file').receive({ filename: join(userDir, 'inbox', `m${i}.wav`) });
    const deadline = Date.now() + 170_000;
    while (out.length + caught.length < MESSAGES && Date.now() < deadline) {
      const now = openDescriptors();
      peak = Math.max(peak, now);
      await sleep(20);
    }
    const failures = caught.map((m) => (m.error as { message?: string }).message);
    assert.deepEqual(failures.slice(0, 5), [], `${failures.length} of ${MESSAGES} failed`);
    assert.equal(out.length, MESSAGES);
    assert.equal((await fsp.readdir(join(userDir, 'outbox'))).length, MESSAGES);
    const accepted = engine.requests().filter((r) => r.method === 'POST' && r.status === 201).length;
    assert.equal(accepted, MESSAGES, 'each message uploaded once');
    // Both ends run in this process: 8 client connections, their server ends, the files they stream.
    assert.ok(peak - before < 120, `file descriptors rose from ${before} to ${peak}`);
  });
});
