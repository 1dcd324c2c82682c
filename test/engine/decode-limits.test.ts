// A compressed file is refused by what its headers declare before it is decoded (a few kilobytes of
// FLAC decode to gigabytes), its decode is bounded by maxDecodedBytes, and the work files it makes are
// the engine's account's only.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { ffmpegMade, flacBomb } from '../fixtures/media';
import { metadata, settled, startTestEngine, upload, type TestEngine } from './helpers';

const LOUDNESS_ONLY = {
  media_enhancement: JSON.stringify({ loudness_target: -16, true_peak: -1, enhancement_model: 'LOUDNESS_ONLY' }),
};

/** A second of tone in 32 channels of PCM in Matroska: more channels than the engine processes. */
function mkv32Channels(): Buffer {
  const outs = Array.from({ length: 32 }, (_, i) => `[a${i}]`).join('');
  return ffmpegMade('wide.mkv', [
    ...['-f', 'lavfi', '-i', 'sine=f=440:r=48000:d=1'],
    ...['-filter_complex', `[0]asplit=32${outs};${outs}amerge=inputs=32`, '-c:a', 'pcm_s16le'],
  ]);
}

/** Rewrites a FLAC's STREAMINFO total-samples field (36 bits, bytes 21 to 25 of the file) to `samples`. */
function claimSamples(flac: Buffer, samples: number): void {
  assert.equal(flac.toString('latin1', 0, 4), 'fLaC');
  flac[21] = (flac[21] & 0xf0) | Math.floor(samples / 2 ** 32);
  flac.writeUInt32BE(samples % 2 ** 32, 22);
}

describe('engine: what a compressed file may decode to', function () {
  this.timeout(120_000);
  let engine: TestEngine;

  before(async () => {
    engine = await startTestEngine({ maxDecodedBytes: 50 * 1024 ** 2, workers: 1 });
  });
  after(() => engine.dispose());

  it('a FLAC that declares more decoded audio than maxDecodedBytes is refused before decoding', async () => {
    const sent = await upload(engine, flacBomb(), 'bomb.flac', LOUDNESS_ONLY);
    assert.equal(sent.status, 201, sent.text);
    // Watch the media's folder while it runs: no decoded file may appear.
    const folder = join(engine.dataDir, 'media', sent.json.uid);
    let decodedSeen = false;
    const watch = setInterval(() => {
      void fsp.readdir(folder).then(
        (names) => (decodedSeen ||= names.some((name) => name.includes('decoded'))),
        () => undefined,
      );
    }, 5);
    const done = await settled(engine, sent.json.uid, 60_000).finally(() => clearInterval(watch));
    assert.equal(done.enhancement_status, 'FAILED');
    assert.equal(done.error?.code, 'MEDIA_TOO_LARGE');
    assert.match(done.error.message, /FLAC file declares 20 s of 8 channels at 192000 Hz, which decode to 117\.2 MiB/);
    assert.match(done.error.message, /maxDecodedBytes/);
    assert.equal(decodedSeen, false, 'nothing was decoded');
  });

  it('a Matroska file of 32 channels is refused before decoding, naming its own format', async () => {
    const sent = await upload(engine, mkv32Channels(), 'wide.mkv', LOUDNESS_ONLY);
    assert.equal(sent.status, 201, sent.text);
    const done = await settled(engine, sent.json.uid, 60_000);
    assert.equal(done.enhancement_status, 'FAILED');
    assert.equal(done.error?.code, 'INVALID_MEDIA');
    assert.equal(done.error?.message, 'unsupported MKV: its audio has 32 channels (supported: 1 to 8)');
  });

  it('a decode is bounded by maxDecodedBytes where the headers understate the length', async () => {
    // 60 s of stereo 48 kHz (22 MB decoded) whose STREAMINFO claims one second: the check before decoding passes.
    const small = await startTestEngine({ maxDecodedBytes: 8 * 1024 ** 2, workers: 1 });
    try {
      const flac = ffmpegMade('long.flac', [
        '-f',
        'lavfi',
        '-i',
        'sine=f=440:r=48000:d=60',
        '-ac',
        '2',
        '-c:a',
        'flac',
      ]);
      claimSamples(flac, 48_000);
      const sent = await upload(small, flac, 'long.flac', LOUDNESS_ONLY);
      assert.equal(sent.status, 201, sent.text);
      const done = await settled(small, sent.json.uid, 60_000);
      assert.equal(done.enhancement_status, 'FAILED', JSON.stringify(done.enhancement_params));
      assert.equal(done.error?.code, 'MEDIA_TOO_LARGE');
      assert.match(done.error.message, /decodes to more than its headers declare: over .*8\.0 MiB of decoded audio/);
    } finally {
      await small.dispose();
    }
  });

  it('work files ffmpeg writes are for the engine account only (600)', async () => {
    const slow = await startTestEngine({ workers: 1 });
    try {
      const ogg = ffmpegMade('tone.ogg', ['-f', 'lavfi', '-i', 'sine=f=440:r=48000:d=20', '-c:a', 'libvorbis']);
      const sent = await upload(slow, ogg, 'tone.ogg', {
        media_enhancement: JSON.stringify({ loudness_target: -16, true_peak: -1, enhancement_model: 'FINCH' }),
      });
      assert.equal(sent.status, 201, sent.text);
      const folder = join(slow.dataDir, 'media', sent.json.uid);
      const modes = new Map<string, number>();
      // A run writes its work files in a folder of its own in the media's (`.run-<random>`).
      const workFolders = async () => [
        folder,
        ...(await fsp.readdir(folder).catch(() => [] as string[]))
          .filter((name) => name.startsWith('.run-'))
          .map((name) => join(folder, name)),
      ];
      for (;;) {
        for (const work of await workFolders())
          for (const name of await fsp.readdir(work).catch(() => [] as string[]))
            if (name.startsWith('output.')) {
              const stat = await fsp.stat(join(work, name)).catch(() => undefined);
              if (stat) modes.set(name, stat.mode & 0o777);
            }
        const { json } = await metadata(slow, sent.json.uid);
        if (json.enhancement_status !== 'PROCESSING' && json.enhancement_status !== 'PENDING') break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.ok(modes.has('output.decoded.wav'), `the decoded file was seen: ${[...modes.keys()].join(', ')}`);
      for (const [name, mode] of modes) assert.equal(mode.toString(8), '600', `${name} is ${mode.toString(8)}`);
    } finally {
      await slow.dispose();
    }
  });
});
