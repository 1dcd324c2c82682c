// Our meter against ffmpeg's ebur128 filter (the reference tool) on speech-like signals.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureWavFile } from '../../src/audio/measure';
import { speechLike, writeWavFile, type TestFormat } from '../fixtures/audio';
import { ffmpegLoudness } from '../fixtures/ffmpeg';

describe('loudness and true peak against ffmpeg ebur128=peak=true', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'reference-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  const cases: TestFormat[] = [];
  for (const sampleRate of [44_100, 48_000]) {
    for (const channels of [1, 2]) {
      cases.push({ sampleRate, channels, bits: 16 }, { sampleRate, channels, bits: 32, float: true });
    }
  }
  cases.forEach((format, index) => {
    const name = `${format.sampleRate} Hz, ${format.channels === 1 ? 'mono' : 'stereo'}, ${format.float ? '32-bit float' : '16-bit'}`;
    it(`${name}: integrated within 0.1 LU, true peak within 0.3 dB`, async () => {
      const path = join(dir, `speech-${index}.wav`);
      // Float files get a hot level with peaks near full scale, where true peak matters most.
      await writeWavFile(
        path,
        format,
        40,
        speechLike(format.sampleRate, format.channels, 100 + index, format.float ? -12 : -24),
      );
      const [ours, reference] = await Promise.all([measureWavFile(path), ffmpegLoudness(path)]);
      assert.ok(
        Math.abs(ours.integratedLufs - reference.integratedLufs) <= 0.1,
        `integrated: ours ${ours.integratedLufs.toFixed(3)}, ffmpeg ${reference.integratedLufs}`,
      );
      assert.ok(
        Math.abs(ours.truePeakDbtp - reference.truePeakDbtp) <= 0.3,
        `true peak: ours ${ours.truePeakDbtp.toFixed(3)}, ffmpeg ${reference.truePeakDbtp.toFixed(3)}`,
      );
      assert.ok(
        Math.abs(ours.loudnessRangeLu - reference.loudnessRangeLu) <= 1,
        `range: ours ${ours.loudnessRangeLu.toFixed(2)}, ffmpeg ${reference.loudnessRangeLu}`,
      );
    });
  });
});
