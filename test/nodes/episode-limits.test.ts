// Enhance file with an intro that decodes to more than the engine allows: the engine's limit on decoded
// audio (settings.js `mediaEnhance.engine.maxDecodedBytes`) holds the join too. A FLAC of silence is a few
// kilobytes a minute and decodes to megabytes a second: refused from what it declares, before it is decoded,
// the enhanced episode kept and nothing of the join left beside it.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { writeWavFile, speechLike } from '../fixtures/audio';
import { ffmpeg } from '../fixtures/ffmpeg';
import { catchAll, helper, initHelper, loadFlow, localConfig, nextInput, stopHelper, TAB } from './flow-helper';

/** 40 MiB of decoded audio: 4 minutes of 44.1 kHz mono float. */
const MAX_DECODED_BYTES = 40 * 1024 ** 2;

describe('nodes: an intro is decoded within the engine limit on decoded audio', function () {
  this.timeout(120_000);
  let userDir: string;
  let media: string;

  before(async () => {
    userDir = await initHelper({ maxDecodedBytes: MAX_DECODED_BYTES });
    media = join(userDir, 'media');
    await fsp.mkdir(join(userDir, 'outbox'), { recursive: true });
    await fsp.mkdir(media, { recursive: true });
    await writeWavFile(
      join(media, 'episode.wav'),
      { sampleRate: 44_100, channels: 1, bits: 16 },
      10,
      speechLike(44_100, 1, 3, -26),
    );
    // 10 minutes of stereo silence: about 100 MiB at the episode's rate and channels, in a FLAC of a few hundred kB.
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'anullsrc=r=44100:cl=stereo:d=600',
      '-c:a',
      'flac',
      join(media, 'silence.flac'),
    ]);
  });
  after(() => stopHelper());

  it('refuses an intro that declares more, naming it and the limit, and keeps the enhanced episode', async () => {
    const flac = await fsp.stat(join(media, 'silence.flac'));
    assert.ok(flac.size < 2 * 1024 ** 2, `the FLAC is small: ${flac.size} bytes`);
    await loadFlow([
      TAB,
      localConfig(),
      {
        id: 'file',
        type: 'media-enhance-file',
        z: 'tab',
        service: 'svc',
        model: 'LOUDNESS_ONLY',
        output: 'file',
        folder: 'outbox',
        intro: join(media, 'silence.flac'),
        wires: [['out']],
      },
      { id: 'out', type: 'helper', z: 'tab' },
      ...catchAll(),
    ]);
    const caught = nextInput(helper.getNode('caught'), 90_000);
    helper.getNode('file').receive({ filename: join(media, 'episode.wav') });
    const { error } = (await caught) as { error: { code: string; message: string } };
    assert.equal(error.code, 'FILE', error.message);
    assert.match(error.message, /the intro \(silence\.flac\)/);
    assert.match(error.message, /600 s .*over the engine's limit of 40\.0 MiB of decoded audio \(maxDecodedBytes\)/);
    // The enhanced episode as the engine made it, and nothing of the join (its hidden work folder) beside it.
    const left = await fsp.readdir(join(userDir, 'outbox'));
    assert.deepEqual(left, ['episode_enhanced.wav'], `outbox/ holds ${left.join(', ')}`);
  });
});
