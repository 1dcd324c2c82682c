// A mono output mixed down by the encoder comes out the same from a float WAV as from an integer one: the
// loop that measures an encode and corrects the next round reads the first round as integer samples (a
// WAV master) and its own rounds as float, and ffmpeg's own downmix of float stereo was 3 dB louder.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planEncoding } from '../../src/audio/output-encoding';
import { ffmpeg, ffmpegLoudness } from '../fixtures/ffmpeg';
import { SPEECH_SAMPLE } from '../enhance/speech-sample';

describe('audio: the mono downmix of an encoder', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await fsp.mkdtemp(join(tmpdir(), 'mono-downmix-'));
  });
  after(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('gives the same loudness and peaks from float and from integer samples, never above the stereo', async () => {
    // Stereo speech with both channels alike, as a mono recording copied to two channels is.
    const float = join(dir, 'float.wav');
    const int = join(dir, 'int.wav');
    await ffmpeg(['-i', SPEECH_SAMPLE, '-af', 'pan=stereo|c0=c0|c1=c0', '-c:a', 'pcm_f32le', float]);
    await ffmpeg(['-i', float, '-c:a', 'pcm_s24le', int]);
    const plan = await planEncoding(
      'mp3',
      undefined,
      { bitrate_kbps: 96, bitrate_mode: 'CBR', downmix_mono: true },
      () => Promise.reject(new Error('an MP3 has no Vorbis quality')),
    );
    const encoded = async (from: string) => {
      const mp3 = join(dir, `${from.endsWith('float.wav') ? 'float' : 'int'}.mp3`);
      await ffmpeg(['-i', from, ...plan.args, mp3]);
      return ffmpegLoudness(mp3);
    };
    const stereo = await ffmpegLoudness(float);
    const fromFloat = await encoded(float);
    const fromInt = await encoded(int);
    assert.ok(
      Math.abs(fromFloat.integratedLufs - fromInt.integratedLufs) <= 0.1,
      `from float ${fromFloat.integratedLufs} LUFS, from integer ${fromInt.integratedLufs}`,
    );
    // The mono mix is the average of its channels: never over their peaks (an MP3 adds a little of its own).
    assert.ok(
      fromFloat.truePeakDbtp <= stereo.truePeakDbtp + 0.5,
      `the stereo peaks at ${stereo.truePeakDbtp} dBTP, its mono MP3 from float at ${fromFloat.truePeakDbtp}`,
    );
  });
});
