// The further outputs' names and the download node's choice of files, checked without a service: a
// pattern filled in from the media stays a plain file name in the folder, and the download node's
// override is its own (a message from enhance file does not change it).
import assert from 'node:assert/strict';
import { outputsToDeliver } from '../../src/nodes/deliver-outputs';
import { readFilesChoice } from '../../src/nodes/files-choice';
import { english } from '../../src/nodes/texts';
import type { InputError } from '../../src/nodes/input-error';
import { checkDistinctNames, namesBeforeUpload, readFurtherOutputs } from '../../src/nodes/output-list';
import type { MediaMetadata } from '../../src/client/types';

/** The key with its values, so a test can see what a message would say. */
const t = (key: string, values?: Record<string, unknown>) => (values ? `${key} ${JSON.stringify(values)}` : key);

/** The first file named as the service names it. */
const SERVICE_NAMES = { name: '' };

function processed(fileName: string): MediaMetadata {
  return {
    uid: 'u1',
    file_name: fileName,
    enhancement_params: { outputs: [{ name: 'master', file_name: `${fileName}_master.wav` }] },
  } as unknown as MediaMetadata;
}

describe('nodes: further outputs, names and choices', () => {
  it("fails a pattern that the media's name fills in as a folder (an upload named '..x' has the stem '.'), naming the field, the name and the rule", () => {
    const outputs = readFurtherOutputs(t, { furtherOutputs: [{ name: 'master', file_name: '{stem}' }] } as never, {});
    assert.throws(
      () => outputsToDeliver(t, SERVICE_NAMES, outputs, processed('..x')),
      (err: Error) =>
        /outputRow/.test(err.message) && err.message.includes('\\".\\"') && /plainFileName/.test(err.message),
    );
    const long = processed(`${'a'.repeat(250)}.mp3`);
    assert.throws(
      () => outputsToDeliver(t, SERVICE_NAMES, outputs, { ...long, file_name: `${'é'.repeat(200)}.mp3` }),
      /TooLong/,
    );
    assert.throws(() => outputsToDeliver(t, SERVICE_NAMES, outputs, processed('a\nb.mp3')), /fileNameControl/);
    assert.equal(outputsToDeliver(t, SERVICE_NAMES, outputs, processed('episode.mp3'))[1].fileName, 'episode');
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

  it('delivers the outputs the media made, not a list changed since (a message resumed after a redeploy)', () => {
    // The node's list now: feed (patterned) and master; the media was made with master and stems only.
    const outputs = readFurtherOutputs(
      t,
      {
        furtherOutputs: [
          { name: 'feed', file_name: '{stem}-feed.{ext}' },
          { name: 'master', file_name: '{stem}-m.{ext}' },
        ],
      } as never,
      {},
    );
    const media = {
      uid: 'u1',
      file_name: 'episode.mp3',
      enhancement_params: {
        outputs: [
          { name: 'master', file_name: 'episode_master.wav' },
          { name: 'stems', file_name: 'episode_stems.wav' },
        ],
      },
    } as unknown as MediaMetadata;
    assert.deepEqual(outputsToDeliver(t, { name: 'out.mp3', field: 'msg.outputFilename' }, outputs, media), [
      { name: 'enhanced', step: 'ENHANCED', fileName: 'out.mp3', field: 'msg.outputFilename' },
      {
        name: 'master',
        step: 'master',
        fileName: 'episode-m.wav',
        field: { prop: 'furtherOutputs', label: 'media-enhance-file.label.outputRow {"row":3,"member":"file_name"}' },
      },
      { name: 'stems', step: 'stems', fileName: '' },
    ]);
  });

  it('refuses two files of one message under one name, naming both fields and the name; names the service gives never clash', () => {
    const t = english; // the words a user reads
    const rows = (...patterns: string[]) =>
      readFurtherOutputs(
        t,
        { furtherOutputs: patterns.map((file_name, i) => ({ name: `out${i}`, file_name })) } as never,
        {},
      );
    const first = { name: 'ep.wav', field: 'msg.outputFilename' };
    const row2 = { prop: 'furtherOutputs', label: 'Outputs, row 2 file_name' };
    // Known before the upload: the first file's name and the patterns without a placeholder.
    assert.throws(
      () => checkDistinctNames(t, namesBeforeUpload(t, first, rows('ep.wav'))),
      (err: InputError) => {
        assert.match(
          err.message,
          /^setting "Outputs, row 2 file_name": is also the file name of msg\.outputFilename: .* \(got "ep\.wav"\)$/,
        );
        assert.deepEqual(err.fields, [row2, 'msg.outputFilename']);
        return true;
      },
    );
    assert.throws(
      () => checkDistinctNames(t, namesBeforeUpload(t, { name: '' }, rows('a.wav', 'a.wav'))),
      /^setting "Outputs, row 3 file_name": is also the file name of setting "Outputs, row 2 file_name"/,
    );
    // Names that differ only in case are one file on macOS's and Windows' file systems.
    assert.throws(
      () => checkDistinctNames(t, namesBeforeUpload(t, first, rows('Ep.WAV'))),
      /^setting "Outputs, row 2 file_name": is also the file name of msg\.outputFilename: .* nor names that differ only in case .*\(got "Ep\.WAV"\)$/,
    );
    checkDistinctNames(t, namesBeforeUpload(t, first, rows('{stem}.wav', '{stem}.wav', 'b.wav')));
    checkDistinctNames(t, namesBeforeUpload(t, { name: '' }, rows('', '')));
    // Filled in from the media: `{stem}.wav` of episode.mp3 is the first file's episode.wav.
    const media = {
      uid: 'u1',
      file_name: 'episode.mp3',
      enhancement_params: { outputs: [{ name: 'out0', file_name: 'episode_out0.wav' }] },
    } as unknown as MediaMetadata;
    const wanted = outputsToDeliver(t, { ...first, name: 'episode.wav' }, rows('{stem}.wav'), media);
    assert.throws(
      () =>
        checkDistinctNames(
          t,
          wanted.map(({ fileName, field }) => ({ name: fileName, field })),
        ),
      /row 2 file_name": is also the file name of msg\.outputFilename: .*\(got "episode\.wav"\)$/,
    );
  });
});
