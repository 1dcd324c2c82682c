// Enhance file with an intro that decodes to more than the engine allows: the engine's limit on decoded
// audio (settings.js `mediaEnhance.engine.maxDecodedBytes`) holds the join too. A FLAC of silence is a few
// kilobytes a minute and decodes to megabytes a second: refused from what it declares, before it is decoded,
// the enhanced episode kept and nothing of the join left beside it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { writeWavFile, speechLike } from '../fixtures/audio';
import { ffmpeg } from '../fixtures/ffmpeg';
import {
  catchAll,
  helper,
  initHelper,
  loadFlow,
  localConfig,
  nextInput,
  stopHelper,
  TAB,
  unloadFlow,
} from './flow-helper';

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
    // A long episode (about 34 MiB decoded) and an intro whose headers declare no length (a FLAC written to
    // a pipe): the intro may decode only the 6 MiB the episode left of the limit, not the whole limit again.
    await writeWavFile(
      join(media, 'long-episode.wav'),
      { sampleRate: 44_100, channels: 1, bits: 16 },
      200,
      speechLike(44_100, 1, 200, -26),
    );
    const args = [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'sine=f=440:r=44100:d=120',
      '-c:a',
      'flac',
      '-f',
      'flac',
      'pipe:1',
    ];
    const piped = await promisify(execFile)('ffmpeg', args, { encoding: 'buffer', maxBuffer: 64 * 1024 ** 2 });
    await fsp.writeFile(join(media, 'no-length.flac'), piped.stdout);
  });
  afterEach(() => unloadFlow());
  after(() => stopHelper());

  /** What Catch gets when enhance file (loudness only, to outbox/) joins `intro` to `episode`. */
  async function caughtJoining(intro: string, episode: string): Promise<{ code: string; message: string }> {
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
        intro: join(media, intro),
        wires: [['out']],
      },
      { id: 'out', type: 'helper', z: 'tab' },
      ...catchAll(),
    ]);
    const caught = nextInput(helper.getNode('caught'), 90_000);
    helper.getNode('file').receive({ filename: join(media, episode) });
    const { error } = (await caught) as { error: { code: string; message: string } };
    assert.equal(error.code, 'FILE', error.message);
    return error;
  }

  it('refuses an intro that declares more, naming it and the limit, and keeps the enhanced episode', async () => {
    const flac = await fsp.stat(join(media, 'silence.flac'));
    assert.ok(flac.size < 2 * 1024 ** 2, `the FLAC is small: ${flac.size} bytes`);
    const error = await caughtJoining('silence.flac', 'episode.wav');
    assert.match(error.message, /the intro \(silence\.flac\)/);
    assert.match(error.message, /600 s .*over the engine's limit of 40\.0 MiB of decoded audio \(maxDecodedBytes\)/);
    // The enhanced episode as the engine made it, and nothing of the join (its hidden work folder) beside it.
    const left = await fsp.readdir(join(userDir, 'outbox'));
    assert.deepEqual(left, ['episode_enhanced.wav'], `outbox/ holds ${left.join(', ')}`);
  });

  it('bounds an intro of undeclared length by what the episode left of the limit', async () => {
    const error = await caughtJoining('no-length.flac', 'long-episode.wav');
    assert.match(error.message, /the intro \(no-length\.flac\) decodes to more than its headers declare/);
    assert.match(error.message, /limit of 40\.0 MiB of decoded audio \(maxDecodedBytes\)/);
  });
});
