import assert from 'node:assert/strict';
import { needsFfmpeg } from '../../src/engine/jobs/ffmpeg-need';
import type { MediaType } from '../../src/engine/storage/media-type';

// Which jobs an engine without ffmpeg leaves to another one sharing the work: as the processor decides.

const WAV: MediaType = { kind: 'audio', ext: 'wav', contentType: 'audio/wav' };
const MP3: MediaType = { kind: 'audio', ext: 'mp3', contentType: 'audio/mpeg' };
const MP4: MediaType = { kind: 'video', ext: 'mp4', contentType: 'video/mp4' };

describe('engine: which jobs need ffmpeg', () => {
  it('WAV in and WAV out needs none; decoding anything else, or encoding MP3, does', () => {
    assert.equal(needsFfmpeg(WAV, {}), false);
    assert.equal(needsFfmpeg(WAV, { transcode: 'WAV' }), false);
    assert.equal(needsFfmpeg(WAV, { transcode: 'MP3' }), true);
    assert.equal(needsFfmpeg(MP3, { transcode: 'WAV' }), true);
    assert.equal(needsFfmpeg(MP4, {}), true);
  });

  it('counts the extra outputs of several-outputs: an MP3 one needs it, WAV ones do not', () => {
    assert.equal(needsFfmpeg(WAV, { outputs: [{ name: 'master' }, { name: 'copy', transcode: 'WAV' }] }), false);
    assert.equal(needsFfmpeg(WAV, { outputs: [{ name: 'master' }, { name: 'feed', transcode: 'MP3' }] }), true);
  });
});
