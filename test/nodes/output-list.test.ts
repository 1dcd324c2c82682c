// The further outputs' names and the download node's choice of files, checked without a service: a
// pattern filled in from the media stays a plain file name in the folder, and the download node's
// override is its own (a message from enhance file does not change it).
import assert from 'node:assert/strict';
import { outputsToDeliver } from '../../src/nodes/deliver-outputs';
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
});
