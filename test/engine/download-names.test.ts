// The names a processed file is downloaded under (`<stem>_enhanced.<ext>`, `<stem>_<output>.<ext>`), for
// uploads named oddly: the engine's stem is the contract's stemOf, the one a node's `{stem}` is filled with.
import assert from 'node:assert/strict';
import { stemOf } from '../../src/contract/attachment';
import { processedFileName } from '../../src/engine/storage/media-record';

describe('engine: the names processed files are downloaded under', function () {
  const cases: [upload: string, downloaded: string][] = [
    ['episode.mp3', 'episode_enhanced.wav'],
    ['episode', 'episode_enhanced.wav'],
    ['a.b.c.wav', 'a.b.c_enhanced.wav'],
    ['x..mp3', 'x._enhanced.wav'],
    ['talk.', 'talk_enhanced.wav'],
    ['.bashrc', '.bashrc_enhanced.wav'],
    ['.hidden.wav', '.hidden_enhanced.wav'],
    ['...', 'media_enhanced.wav'],
    ['.', 'media_enhanced.wav'],
    ['', 'media_enhanced.wav'],
    ['   ', 'media_enhanced.wav'],
    ['a/...', 'media_enhanced.wav'],
    ['dir/', 'media_enhanced.wav'],
    ['dir/sub/talk.mp3', 'talk_enhanced.wav'],
    ['C:\\rec\\talk.wav', 'talk_enhanced.wav'],
    ['Épisode 7.wav', 'Épisode 7_enhanced.wav'],
    ['会议 录音.m4a', '会议 录音_enhanced.wav'],
    ['emoji 🎙️.flac', 'emoji 🎙️_enhanced.wav'],
  ];

  it('keeps the base name without its last extension; a name of dots or nothing becomes "media"', () => {
    for (const [upload, downloaded] of cases)
      assert.equal(processedFileName(upload, 'enhanced', 'wav'), downloaded, JSON.stringify(upload));
  });

  it("names a further output the same way, from the stem a node's {stem} is filled with", () => {
    for (const [upload] of cases)
      assert.equal(
        processedFileName(upload, 'master', 'flac'),
        `${stemOf(upload)}_master.flac`,
        JSON.stringify(upload),
      );
  });
});
