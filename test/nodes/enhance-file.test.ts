// enhance file: the whole job in one node, on the built-in engine, checked as a user would: the file
// written, its loudness measured by ffmpeg, the statuses seen, msg.loudness against the metadata.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { SPEECH_SAMPLE } from '../enhance/speech-sample';
import { ffmpeg, ffmpegLoudness } from '../fixtures/ffmpeg';
import { makeWav } from '../fixtures/media';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  localConfig,
  nextInput,
  sleep,
  statusTexts,
  stopHelper,
  TAB,
} from './flow-helper';

type Loudness = Record<
  'input' | 'output',
  Record<'integrated_lufs' | 'true_peak_dbtp' | 'loudness_range_lu', number | null>
>;

describe('nodes: enhance file, the whole job in one node', function () {
  this.timeout(90_000);
  let userDir: string;
  let speech: string;

  before(async () => {
    userDir = await initHelper();
    speech = join(userDir, 'Épisode 7.wav');
    // Real speech (the shipped sample at 44.1 kHz): LARK_V2's DeepFilterNet3 keeps speech, and takes a
    // synthetic imitation of it partly for noise.
    await ffmpeg(['-i', SPEECH_SAMPLE, '-ar', '44100', '-c:a', 'pcm_s16le', speech]);
  });
  after(() => stopHelper());
  afterEach(() => helper.unload());

  function flowWith(node: Record<string, unknown>): object[] {
    return [
      TAB,
      localConfig(),
      { id: 'file', type: 'media-enhance-file', z: 'tab', service: 'svc', ...node, wires: [['out']] },
      { id: 'out', type: 'helper', z: 'tab' },
      ...catchAll(),
    ];
  }

  it('turns a path into an enhanced file in the folder, at the target loudness, with msg.loudness and its progress in the status', async () => {
    await loadFlow(
      flowWith({
        loudnessTarget: '-18',
        truePeak: '-2',
        enhancementLevel: '100',
        model: 'LARK_V2',
        transcode: '',
        output: 'file',
        folder: 'outbox',
        fileName: '',
      }),
    );
    const out = nextInput(helper.getNode('out'));
    helper.getNode('file').receive({ filename: speech, topic: 'episode 7' });
    const msg = await out;
    const expected = join(userDir, 'outbox', 'Épisode 7_enhanced.wav');
    assert.equal(msg.filename, expected);
    assert.equal(msg.payload, expected);
    assert.equal(msg.inputFilename, speech);
    assert.equal(msg.topic, 'episode 7', 'the rest of the message goes on');
    assert.deepEqual(
      await fsp.readdir(join(userDir, 'outbox')),
      ['Épisode 7_enhanced.wav'],
      'one finished file, nothing partial',
    );
    const measured = await ffmpegLoudness(expected);
    assert.ok(Math.abs(measured.integratedLufs - -18) <= 0.5, `${measured.integratedLufs} LUFS, target -18`);
    assert.ok(measured.truePeakDbtp <= -1.9, `${measured.truePeakDbtp} dBTP, limit -2`);
    // msg.loudness says what the service measured: the output as ffmpeg reads it, the input as it was.
    const loudness = msg.loudness as Loudness;
    const params = (msg.media as { enhancement_params: Record<string, number> }).enhancement_params;
    assert.ok(Math.abs(loudness.output.integrated_lufs! - measured.integratedLufs) <= 0.1);
    assert.equal(loudness.input.integrated_lufs, params.input_loudness_lufs);
    assert.equal(loudness.input.true_peak_dbtp, params.input_true_peak_dbtp);
    assert.equal(loudness.output.loudness_range_lu, params.output_loudness_range_lu);
    assert.ok(Math.abs(loudness.input.integrated_lufs - (await ffmpegLoudness(speech)).integratedLufs) <= 0.1);
    assert.equal(typeof msg.media_uid, 'string');
    await sleep(300);
    const texts = statusTexts(helper.getNode('file')).map(String);
    // Over loopback the transfers end before a status is due; the processing shows, counting (or, when a
    // held status answer came back with the engine's progress, how far it is).
    assert.ok(
      texts.some((t) => /^processing (\d+s|\d+%(, about \d+ s left)?)$/.test(t)),
      texts.join(', '),
    );
    // The last status names the result: the loudness before and after.
    assert.equal(
      texts.at(-1),
      `done: ${params.input_loudness_lufs.toFixed(1)} -> ${params.output_loudness_lufs.toFixed(1)} LUFS`,
    );
  });

  it('takes a Buffer and gives a Buffer, with msg.enhancement overriding the node', async () => {
    await loadFlow(flowWith({ loudnessTarget: '-16', truePeak: '-1', output: 'buffer', folder: '' }));
    const out = nextInput(helper.getNode('out'));
    helper.getNode('file').receive({
      payload: await fsp.readFile(speech),
      filename: 'memo.wav',
      enhancement: { loudness_target: -23, transcode: 'MP3' },
    });
    const msg = await out;
    assert.ok(Buffer.isBuffer(msg.payload));
    assert.equal(msg.contentType, 'audio/mpeg');
    assert.equal(msg.inputFilename, undefined, 'no input path: it came as a Buffer');
    const mp3 = join(userDir, 'from-buffer.mp3');
    await fsp.writeFile(mp3, msg.payload);
    assert.ok(Math.abs((await ffmpegLoudness(mp3)).integratedLufs - -23) <= 0.6);
  });

  it('names the output after msg.outputFilename, and refuses a name with a folder part', async () => {
    await loadFlow(flowWith({ output: 'file', folder: 'named' }));
    const out = nextInput(helper.getNode('out'));
    helper.getNode('file').receive({ filename: speech, outputFilename: 'show 7 final.wav' });
    assert.equal((await out).filename, join(userDir, 'named', 'show 7 final.wav'));
    const caught = nextInput(helper.getNode('caught'));
    helper.getNode('file').receive({ filename: speech, outputFilename: '../elsewhere.wav' });
    const error = (await caught) as { error: { message: string; code: string } };
    assert.equal(error.error.code, 'VALIDATION');
    assert.match(
      error.error.message,
      /^msg\.outputFilename: must be a file name without a folder part \(got "\.\.\/elsewhere\.wav"\)$/,
    );
    assert.deepEqual(await fsp.readdir(join(userDir, 'named')), ['show 7 final.wav']);
  });

  it('sends a file the service cannot enhance to Catch with the reason first, and writes nothing', async () => {
    await loadFlow(flowWith({ output: 'file', folder: 'refused' }));
    const caught = nextInput(helper.getNode('caught'));
    const sent = collect(helper.getNode('out'));
    // A WAV whose header promises more than it holds: accepted, then FAILED by the engine.
    const damaged = makeWav(1, 16_000).subarray(0, 2_000);
    helper.getNode('file').receive({ payload: damaged, filename: 'cut.wav', topic: 'original' });
    const error = (await caught) as { topic: string; error: { message: string; code: string } };
    assert.equal(error.error.code, 'JOB_FAILED');
    assert.match(error.error.message, /^truncated WAV: .* \(media \S+ ended FAILED \[INVALID_MEDIA\]\)$/);
    assert.equal(error.topic, 'original');
    assert.equal(sent.length, 0);
    assert.deepEqual(await fsp.readdir(join(userDir, 'refused')).catch(() => []), []);
    await sleep(300);
    assert.equal(statusTexts(helper.getNode('file')).at(-1), 'enhancement failed');
  });

  it('says "invalid settings" at deploy for a file output without a folder', async () => {
    await loadFlow(flowWith({ output: 'file', folder: '' }));
    assert.deepEqual(statusTexts(helper.getNode('file')), ['invalid settings']);
  });
});
