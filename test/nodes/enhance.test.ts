// enhance audio (v1 JSON: the service fetches a URL) and enhance video (v1 multipart), on the built-in engine.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { makeMp4, makeWav } from '../fixtures/media';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  localConfig,
  nextInput,
  statusTexts,
  stopHelper,
  TAB,
} from './flow-helper';

describe('nodes: enhance audio and enhance video', function () {
  this.timeout(60_000);
  let userDir: string;
  let files: Server;
  let filesUrl: string;
  const wav = makeWav(1, 22_050);

  before(async () => {
    userDir = await initHelper();
    // A file server on loopback, as a user's NAS or CMS would serve the audio.
    files = createServer((req, res) => {
      if (req.url !== '/shows/episode%201.wav') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': wav.length }).end(wav);
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  after(async () => {
    files.close();
    await stopHelper();
  });
  afterEach(() => helper.unload());

  it('enhance audio: a URL in msg.payload becomes a media that completes; the name comes from the URL', async () => {
    await loadFlow([
      TAB,
      localConfig(),
      {
        id: 'audio',
        type: 'media-enhance-audio',
        z: 'tab',
        service: 'svc',
        loudnessTarget: '-16',
        peakLimit: '-1',
        enhancementLevel: '0.8',
        transcode: '',
        model: 'LARK_V2',
        fileName: '',
        wires: [['wait', 'accepted']],
      },
      { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', timeout: '', wires: [['completed']] },
      { id: 'accepted', type: 'helper', z: 'tab' },
      { id: 'completed', type: 'helper', z: 'tab' },
      ...catchAll(),
    ]);
    const errors = collect(helper.getNode('caught'));
    const accepted = nextInput(helper.getNode('accepted'));
    const completed = nextInput(helper.getNode('completed'));
    helper
      .getNode('audio')
      .receive({ payload: `${filesUrl}/shows/episode%201.wav`, enhancement: { model_arch: 'FINCH' } });

    const answer = await accepted;
    const generated = (answer.payload as { generated_name: string }).generated_name;
    assert.equal(typeof generated, 'string');
    assert.equal(answer.media_uid, generated);
    const final = (await completed).payload as {
      enhancement_status: string;
      file_name: string;
      enhancement_params: Record<string, unknown>;
    };
    assert.equal(final.enhancement_status, 'COMPLETED');
    assert.equal(final.file_name, 'episode 1.wav');
    assert.equal(errors.length, 0, JSON.stringify(errors.map((e) => e.error)));
  });

  it('enhance audio: msg.url and msg.filename are used when the payload is not a URL', async () => {
    await loadFlow([
      TAB,
      localConfig(),
      {
        id: 'audio',
        type: 'media-enhance-audio',
        z: 'tab',
        service: 'svc',
        loudnessTarget: '-23',
        peakLimit: '-2',
        enhancementLevel: '1',
        transcode: 'WAV',
        model: 'LARK',
        fileName: 'ignored.wav',
        wires: [['wait']],
      },
      { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', wires: [['completed']] },
      { id: 'completed', type: 'helper', z: 'tab' },
      ...catchAll(),
    ]);
    const completed = nextInput(helper.getNode('completed'));
    helper.getNode('audio').receive({
      payload: { some: 'object' },
      url: `${filesUrl}/shows/episode%201.wav`,
      filename: '/in/box/Interview.wav',
    });
    const final = (await completed).payload as { file_name: string };
    assert.equal(final.file_name, 'Interview.wav');
  });

  it('enhance video: a Buffer and a path each become a video record with media_uid', async () => {
    const mp4 = makeMp4();
    const path = join(userDir, 'clip.mp4');
    await fsp.writeFile(path, mp4);
    await loadFlow([
      TAB,
      localConfig(),
      {
        id: 'video',
        type: 'media-enhance-video',
        z: 'tab',
        service: 'svc',
        loudnessTarget: '-14',
        truePeak: '-1',
        enhancementLevel: '50',
        model: 'LARK_V2',
        wires: [['records']],
      },
      { id: 'records', type: 'helper', z: 'tab' },
      ...catchAll(),
    ]);
    const records = collect(helper.getNode('records'));
    const errors = collect(helper.getNode('caught'));
    helper.getNode('video').receive({ payload: mp4, filename: 'from-buffer.mp4' });
    helper.getNode('video').receive({ filename: path });
    const deadline = Date.now() + 20_000;
    while (records.length + errors.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(errors.length, 0, JSON.stringify(errors.map((e) => e.error)));
    const names = records.map((m) => (m.payload as { file_name: string }).file_name).sort();
    assert.deepEqual(names, ['clip.mp4', 'from-buffer.mp4']);
    for (const record of records) {
      const payload = record.payload as { uid: string; enhancement_level: number };
      assert.equal(record.media_uid, payload.uid);
      assert.equal(payload.enhancement_level, 50);
    }
  });

  it('the built-in engine takes a dozen files dropped at once without making any wait for a rate-limit window', async () => {
    await loadFlow([
      TAB,
      localConfig(),
      { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['accepted']] },
      { id: 'accepted', type: 'helper', z: 'tab' },
      ...catchAll(),
    ]);
    const accepted = collect(helper.getNode('accepted'));
    const errors = collect(helper.getNode('caught'));
    for (let i = 0; i < 12; i++)
      helper.getNode('upload').receive({ payload: makeWav(0.2, 8000), filename: `take ${i}.wav` });
    const deadline = Date.now() + 50_000;
    while (accepted.length + errors.length < 12 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(errors.length, 0, JSON.stringify(errors.map((e) => e.error)));
    assert.equal(accepted.length, 12);
    // The retired service's 10 uploads a minute would have queued the 11th and 12th for a minute.
    const waits = statusTexts(helper.getNode('upload')).filter((text) => /queued|rate limited/.test(String(text)));
    assert.deepEqual(waits, [], 'no upload waited in line for a window');
  });
});
