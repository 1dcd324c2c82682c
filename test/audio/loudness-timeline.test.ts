// The meter's per-second timeline (short-term loudness, true peak per second) against ffmpeg's ebur128.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureWavFile } from '../../src/audio/measure';
import { speechLike, writeWavFile, type Signal, type TestFormat } from '../fixtures/audio';
import { ffmpegLoudnessTimeline } from '../fixtures/ffmpeg';

/** ffmpeg reports short-term loudness only once it has 3 s. */
const FIRST_FULL_SECOND = 3;

/** Speech, then `silentSeconds` of digital silence from second 8, then speech again. */
function speechWithSilence(format: TestFormat, seed: number, level: number, silentSeconds: number): Signal {
  const speech = speechLike(format.sampleRate, format.channels, seed, level);
  let at = 0;
  const silenceFrom = 8 * format.sampleRate;
  const silenceTo = silenceFrom + silentSeconds * format.sampleRate;
  return (frames) => {
    const out = speech(frames);
    for (let i = 0; i < frames; i++, at++) {
      if (at >= silenceFrom && at < silenceTo) for (const channel of out) channel[i] = 0;
    }
    return out;
  };
}

describe('loudness timeline against ffmpeg ebur128=peak=true', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'timeline-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  const cases: Array<{ format: TestFormat; seconds: number; level: number }> = [
    { format: { sampleRate: 48_000, channels: 1, bits: 16 }, seconds: 20, level: -24 },
    { format: { sampleRate: 44_100, channels: 2, bits: 16 }, seconds: 16.4, level: -20 },
    { format: { sampleRate: 48_000, channels: 2, bits: 32, float: true }, seconds: 15.6, level: -12 },
    { format: { sampleRate: 16_000, channels: 1, bits: 16 }, seconds: 18, level: -18 },
  ];
  cases.forEach(({ format, seconds, level }, index) => {
    const name = `${format.sampleRate} Hz, ${format.channels === 1 ? 'mono' : 'stereo'}, ${seconds} s`;
    it(`${name}: short-term within 0.1 LU from 3 s on, true peak per second within 0.3 dB`, async () => {
      const path = join(dir, `timeline-${index}.wav`);
      await writeWavFile(path, format, seconds, speechWithSilence(format, 200 + index, level, 2));
      const [ours, reference] = await Promise.all([measureWavFile(path), ffmpegLoudnessTimeline(path)]);
      const { shortTermLufs, truePeakDbtp } = ours.perSecond;
      assert.equal(shortTermLufs.length, Math.round(seconds), 'one short-term value per second, the length rounded');
      assert.equal(truePeakDbtp.length, Math.round(seconds), 'one true peak per second');
      for (let i = FIRST_FULL_SECOND - 1; i < Math.floor(seconds); i++) {
        assert.ok(
          Math.abs(shortTermLufs[i] - reference.shortTermLufs[i]) <= 0.1,
          `short-term at ${i + 1} s: ours ${shortTermLufs[i].toFixed(3)}, ffmpeg ${reference.shortTermLufs[i]}`,
        );
      }
      for (let i = 0; i < Math.floor(seconds); i++) {
        const silent = i >= 8 && i < 10;
        if (silent) {
          // ffmpeg reads the filter's ringing from the sound before as this second's peak; a second of zeros is silence here.
          assert.equal(truePeakDbtp[i], -Infinity, `second ${i} is digital silence`);
          continue;
        }
        assert.ok(
          Math.abs(truePeakDbtp[i] - reference.truePeakDbtp[i]) <= 0.3,
          `true peak in second ${i}: ours ${truePeakDbtp[i].toFixed(2)}, ffmpeg ${reference.truePeakDbtp[i]}`,
        );
      }
      const loudestSecond = Math.max(...truePeakDbtp);
      assert.equal(loudestSecond, ours.truePeakDbtp, "the file's true peak is its loudest second's");
    });
  });
});
