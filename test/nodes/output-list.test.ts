// The further outputs' names and the download node's choice of files, checked without a service: a
// pattern filled in from the media stays a plain file name in the folder, and the download node's
// override is its own (a message from enhance file does not change it).
import assert from 'node:assert/strict';
import { outputsToDeliver } from '../../src/nodes/deliver-outputs';
import { readFilesChoice } from '../../src/nodes/files-choice';
import { readFurtherOutputs } from '../../src/nodes/output-list';
import type { MediaMetadata } from '../../src/client/types';

/** The key with its values, so a test can see what a message would say. */
const t = (key: string, values?: Record<string, unknown>) => (values ? `${key} ${JSON.stringify(values)}` : key);

function processed(fileName: string): MediaMetadata {
  return {
    uid: 'u1',
    file_name: fileName,
    enhancement_params: { outputs: [{ name: 'master', file_name: `${fileName}_master.wav` }] },
  } as unknown as MediaMetadata;
}

describe('nodes: further outputs, names and choices', () => {
  it("fails a pattern that the media's name fills in as a folder, naming the field, the name and the rule", () => {
    const outputs = readFurtherOutputs(t, { furtherOutputs: [{ name: 'master', file_name: '{stem}' }] } as never, {});
    assert.throws(
      () => outputsToDeliver(t, '', outputs, processed('...')),
      (err: Error) => /outputRow/.test(err.message) && /\.\./.test(err.message) && /plainFileName/.test(err.message),
    );
    const long = processed(`${'a'.repeat(250)}.mp3`);
    assert.throws(() => outputsToDeliver(t, '', outputs, { ...long, file_name: `${'é'.repeat(200)}.mp3` }), /TooLong/);
    assert.throws(() => outputsToDeliver(t, '', outputs, processed('a\nb.mp3')), /fileNameControl/);
    assert.equal(outputsToDeliver(t, '', outputs, processed('episode.mp3'))[1].fileName, 'episode');
  });

  it("keeps the download node's choice for a message from enhance file, and takes its own msg.outputNames", () => {
    const step = { files: 'step' } as never;
    const named = { files: 'named', outputNames: 'enhanced', send: 'together' } as never;
    // enhance file's message carries its msg.outputs (its request's rows, or [] for the first file only).
    assert.deepEqual(readFilesChoice(t, step, { outputs: [{ name: 'master', transcode: 'WAV' }] }), { files: 'step' });
    assert.deepEqual(readFilesChoice(t, step, { outputs: [] }), { files: 'step' });
    assert.deepEqual(readFilesChoice(t, named, { outputs: [{ name: 'master' }] }), {
      files: 'named',
      names: ['enhanced'],
      send: 'together',
    });
    // An empty override is none.
    assert.deepEqual(readFilesChoice(t, step, { outputNames: [] }), { files: 'step' });
    assert.deepEqual(readFilesChoice(t, step, { outputNames: '' }), { files: 'step' });
    // Its own property, as a list or as text like the setting.
    assert.deepEqual(readFilesChoice(t, step, { outputNames: ['master', 'enhanced', 'master'] }), {
      files: 'named',
      names: ['master', 'enhanced'],
      send: 'together',
    });
    assert.deepEqual(readFilesChoice(t, step, { outputNames: 'enhanced, feed' }), {
      files: 'named',
      names: ['enhanced', 'feed'],
      send: 'together',
    });
    assert.throws(() => readFilesChoice(t, step, { outputNames: [{ name: 'feed' }] }), /msg\.outputNames\[0\]/);
    assert.throws(() => readFilesChoice(t, step, { outputNames: 7 }), /msg\.outputNames/);
  });

  it('refuses pre as an output to download, in the setting and in msg.outputNames: it is a step, not an output', () => {
    const named = { files: 'named', outputNames: 'enhanced pre', send: 'together' } as never;
    assert.throws(() => readFilesChoice(t, named, {}), /outputNames.*pre|pre.*outputName/s);
    assert.throws(
      () => readFilesChoice(t, { files: 'step' } as never, { outputNames: ['pre'] }),
      /msg\.outputNames\[0\]/,
    );
  });
});
