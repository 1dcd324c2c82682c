// The happy paths a user wires first: upload -> wait -> download, with a Buffer and with a path,
// to a file and to a Buffer, on the built-in local engine started by the config node.
import assert from 'node:assert/strict';
import { promises as fsp, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { measureWavFile } from '../../src/audio/measure';
import { SPEECH_SAMPLE } from '../enhance/speech-sample';
import {
  catchAll,
  collect,
  helper,
  statusTexts,
  initHelper,
  loadFlow,
  localConfig,
  nextInput,
  sleep,
  stopHelper,
  TAB,
} from './flow-helper';

function pipeline(download: Record<string, unknown>): object[] {
  return [
    TAB,
    localConfig(),
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
      wires: [['wait', 'uploaded']],
    },
    {
      id: 'wait',
      type: 'media-enhance-wait',
      z: 'tab',
      service: 'svc',
      timeout: '60',
      wires: [['download', 'completed']],
    },
    {
      id: 'download',
      type: 'media-enhance-download',
      z: 'tab',
      service: 'svc',
      step: 'ENHANCED',
      ...download,
      wires: [['downloaded']],
    },
    { id: 'uploaded', type: 'helper', z: 'tab' },
    { id: 'completed', type: 'helper', z: 'tab' },
    { id: 'downloaded', type: 'helper', z: 'tab' },
    ...catchAll(),
  ];
}

describe('nodes: upload -> wait -> download on the built-in engine', function () {
  this.timeout(60_000);
  let userDir: string;
  // Real speech (10.6 s, 16 kHz): the default model takes a steady tone for noise.
  const wav = readFileSync(SPEECH_SAMPLE);

  before(async () => {
    userDir = await initHelper();
  });
  after(stopHelper);
  afterEach(() => helper.unload());

  it('turns a Buffer into an enhanced file in the output folder, with every message as the help says', async () => {
    await loadFlow(pipeline({ output: 'file', folder: 'outbox' }));
    const errors = collect(helper.getNode('caught'));
    const uploaded = nextInput(helper.getNode('uploaded'));
    const completed = nextInput(helper.getNode('completed'));
    const downloaded = nextInput(helper.getNode('downloaded'));
    helper.getNode('upload').receive({ payload: wav, filename: '/somewhere/interview.wav', topic: 'kept' });

    const up = await uploaded;
    assert.equal(typeof up.media_uid, 'string');
    assert.equal((up.payload as { uid: string }).uid, up.media_uid);
    assert.equal((up.payload as { file_name: string }).file_name, 'interview.wav');

    const done = await completed;
    assert.equal((done.payload as { enhancement_status: string }).enhancement_status, 'COMPLETED');
    assert.equal(done.media_uid, up.media_uid);

    const out = await downloaded;
    assert.equal(out.topic, 'kept');
    assert.equal(out.contentType, 'audio/wav');
    assert.equal(
      (out.filename as string).startsWith(join(userDir, 'outbox')),
      true,
      `written under the working folder: ${String(out.filename)}`,
    );
    const measured = await measureWavFile(out.filename as string);
    assert.ok(
      Math.abs(measured.integratedLufs - -16) <= 0.5,
      `normalized to the node's -16 LUFS: ${measured.integratedLufs}`,
    );
    assert.deepEqual(
      await fsp.readdir(join(userDir, 'outbox')),
      [(out.filename as string).split('/').pop()],
      'no temporary file left beside it',
    );
    assert.equal(errors.length, 0);
  });

  it('uploads from a path in msg.filename and downloads into msg.payload as a Buffer, under a chosen step', async () => {
    const path = join(userDir, 'from-disk.wav');
    await fsp.writeFile(path, wav);
    await loadFlow(pipeline({ output: 'buffer' }));
    const uploaded = nextInput(helper.getNode('uploaded'));
    const downloaded = nextInput(helper.getNode('downloaded'));
    helper.getNode('upload').receive({ filename: path, step: 'PRE' });

    assert.equal(((await uploaded).payload as { file_name: string }).file_name, 'from-disk.wav');
    const out = await downloaded;
    assert.ok(Buffer.isBuffer(out.payload));
    assert.deepEqual(out.payload, wav);
    assert.equal(out.contentType, 'audio/wav');
  });

  it('names the downloaded file as the node says, and ends every node on "done", naming the loudness once it is measured', async () => {
    await loadFlow(pipeline({ output: 'file', folder: join(userDir, 'named'), fileName: 'episode-12.wav' }));
    const downloaded = nextInput(helper.getNode('downloaded'));
    helper.getNode('upload').receive({ payload: wav });
    const out = await downloaded;
    assert.equal(out.filename, join(userDir, 'named', 'episode-12.wav'));
    await sleep(300); // a status line changes at most every 250 ms
    // The upload ends before processing: nothing measured yet; wait and download name the loudness reached.
    // The loudness reached: -16 within the interface's tolerance of 0.5 LU.
    const measured = /^done: -\d+\.\d -> -(15\.[5-9]|16\.[0-5]) LUFS$/;
    for (const [id, last] of [
      ['upload', /^done$/],
      ['wait', measured],
      ['download', measured],
    ] as const) {
      const texts = statusTexts(helper.getNode(id));
      assert.match(String(texts.at(-1)), last, `${id} ends on ${last} (saw ${JSON.stringify(texts)})`);
    }
    assert.equal(statusTexts(helper.getNode('wait')).at(-1), statusTexts(helper.getNode('download')).at(-1));
  });
});
