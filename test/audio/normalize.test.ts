// Normalization as a user checks it: the output's loudness and true peak, measured by ffmpeg.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvelopeBounds } from '../../src/audio/envelope-bounds';
import { measureWavFile } from '../../src/audio/measure';
import { normalizeWavFile } from '../../src/audio/normalize';
import { TruePeakLimiter } from '../../src/audio/true-peak-limiter';
import { openWav } from '../../src/audio/wav-reader';
import { encodeWav, sine, speechLike, writeWavFile, type TestFormat } from '../fixtures/audio';
import { ffmpeg, ffmpegLoudness } from '../fixtures/ffmpeg';

describe('loudness normalization', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'normalize-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  async function speechFile(name: string, format: TestFormat, level: number, seconds = 30) {
    const path = join(dir, name);
    await writeWavFile(path, format, seconds, speechLike(format.sampleRate, format.channels, 7, level));
    return path;
  }

  const targets: Array<[string, TestFormat, number, number, number]> = [
    // name, format, input level (dBFS RMS while speaking), target LUFS, ceiling dBTP
    [
      'a quiet 16-bit stereo recording to -16 LUFS / -1 dBTP',
      { sampleRate: 48_000, channels: 2, bits: 16 },
      -38,
      -16,
      -1,
    ],
    [
      'a loud float mono recording down to -23 LUFS / -2 dBTP',
      { sampleRate: 44_100, channels: 1, bits: 32, float: true },
      -8,
      -23,
      -2,
    ],
    [
      'a 24-bit file to -14 LUFS under a -3 dBTP ceiling (the limiter works hard)',
      { sampleRate: 48_000, channels: 2, bits: 24 },
      -30,
      -14,
      -3,
    ],
  ];
  for (const [name, format, level, target, ceiling] of targets) {
    it(`brings ${name}`, async () => {
      const input = await speechFile(`${target}-${ceiling}.wav`, format, level);
      const output = join(dir, `${target}-${ceiling}-out.wav`);
      const report = await normalizeWavFile(input, output, { targetLufs: target, ceilingDbtp: ceiling });
      const measured = await ffmpegLoudness(output);
      assert.ok(Math.abs(measured.integratedLufs - target) <= 0.5, `ffmpeg reads ${measured.integratedLufs} LUFS`);
      assert.ok(measured.truePeakDbtp <= ceiling + 0.1, `ffmpeg reads ${measured.truePeakDbtp} dBTP`);
      // What the report says is what the file holds.
      assert.ok(
        Math.abs(report.output.integratedLufs - measured.integratedLufs) <= 0.1,
        `report ${report.output.integratedLufs}`,
      );
      assert.ok(
        Math.abs(report.output.truePeakDbtp - measured.truePeakDbtp) <= 0.3,
        `report ${report.output.truePeakDbtp}`,
      );
      const before = await ffmpegLoudness(input);
      assert.ok(Math.abs(report.input.integratedLufs - before.integratedLufs) <= 0.1);
      // Same format out as in.
      const source = await openWav(output);
      await source.close();
      assert.equal(source.layout.sampleRate, format.sampleRate);
      assert.equal(source.layout.channels, format.channels);
      assert.equal(source.layout.bitsPerSample, format.bits);
      assert.equal(source.layout.encoding, format.float ? 'float' : 'int');
    });
  }

  it('returns silence and near-silence unchanged, with the reason, never amplified', async () => {
    for (const [name, samples] of [
      ['silence', new Float32Array(48_000 * 5)],
      ['a hum at -80 dBFS', sine(48_000, 50, -80, 5)],
    ] as const) {
      const input = join(dir, `${name}.wav`);
      await writeFile(input, encodeWav({ sampleRate: 48_000, channels: 1, bits: 24 }, [samples]));
      const output = join(dir, `${name}-out.wav`);
      const report = await normalizeWavFile(input, output, { targetLufs: -16, ceilingDbtp: -1 });
      assert.deepEqual(await readFile(output), await readFile(input), name);
      assert.match(report.unchangedBecause ?? '', /below the -70 LUFS gate: returned unchanged/);
    }
  });

  it('measures a clip shorter than one 400 ms gating block over its whole length, and says so', async () => {
    const format: TestFormat = { sampleRate: 48_000, channels: 1, bits: 24 };
    const short = join(dir, 'tone-0.3s.wav');
    const long = join(dir, 'tone-3s.wav');
    await writeFile(short, encodeWav(format, [sine(48_000, 1000, -20, 0.3)]));
    await writeFile(long, encodeWav(format, [sine(48_000, 1000, -20, 3)]));
    const [clip, reference] = [await measureWavFile(short), await measureWavFile(long)];
    assert.equal(clip.measuredWhole, true);
    assert.equal(reference.measuredWhole, false);
    assert.ok(
      Math.abs(clip.integratedLufs - reference.integratedLufs) <= 0.1,
      `${clip.integratedLufs} vs ${reference.integratedLufs}`,
    );
    // Near-silence stays under the gate, short or not.
    await writeFile(join(dir, 'hum-0.3s.wav'), encodeWav(format, [sine(48_000, 50, -80, 0.3)]));
    assert.equal((await measureWavFile(join(dir, 'hum-0.3s.wav'))).integratedLufs, -Infinity);
  });

  it('normalizes a 0.3 s clip of speech like any other file (ffmpeg measures it looped ten times)', async () => {
    const format: TestFormat = { sampleRate: 48_000, channels: 1, bits: 16 };
    const input = join(dir, 'clip.wav');
    await writeWavFile(input, format, 0.3, speechLike(48_000, 1, 3, -24));
    const output = join(dir, 'clip-out.wav');
    const report = await normalizeWavFile(input, output, { targetLufs: -19, ceilingDbtp: -1 });
    assert.equal(report.unchangedBecause, undefined);
    assert.ok(report.input.samplePeakDbfs > -40, `the clip has signal (peak ${report.input.samplePeakDbfs} dBFS)`);
    assert.equal(report.targetReached, true, `output ${report.output.integratedLufs} LUFS`);
    assert.notDeepEqual(await readFile(output), await readFile(input));
    // ffmpeg's meter needs a 400 ms block: ten copies in a row have the clip's loudness.
    const looped = join(dir, 'clip-out-looped.wav');
    await ffmpeg(['-stream_loop', '9', '-i', output, '-c:a', 'pcm_f32le', looped]);
    const measured = await ffmpegLoudness(looped);
    assert.ok(Math.abs(measured.integratedLufs - -19) <= 0.5, `ffmpeg reads ${measured.integratedLufs} LUFS`);
    assert.ok(measured.truePeakDbtp <= -0.9, `ffmpeg reads ${measured.truePeakDbtp} dBTP`);
  });

  it('leaves no partial output when the input is damaged', async () => {
    const input = join(dir, 'damaged.wav');
    const wav = encodeWav({ sampleRate: 48_000, channels: 1, bits: 16 }, [sine(48_000, 440, -20, 2)]);
    await writeFile(input, wav.subarray(0, wav.length - 5000));
    const output = join(dir, 'damaged-out.wav');
    await assert.rejects(normalizeWavFile(input, output, { targetLufs: -16, ceilingDbtp: -1 }), /truncated WAV/);
    const { readdir } = await import('node:fs/promises');
    assert.deepEqual(
      (await readdir(dir)).filter((f) => f.startsWith('damaged-out')),
      [],
    );
  });

  it('limits without steps: the gain changes by at most 1/(5 ms of frames) per frame, and never too late', () => {
    const rate = 48_000;
    // A tone that jumps from -30 to -3 dBFS: with +6 dB of gain and a -6 dBTP ceiling the limiter must act.
    const quiet = sine(rate, 1000, -30, 0.5);
    const loud = sine(rate, 1000, -3, 0.5);
    const x = new Float32Array(quiet.length + loud.length);
    x.set(quiet);
    x.set(loud, quiet.length);
    const limiter = new TruePeakLimiter({ sampleRate: rate, channels: 1, gainDb: 6, ceilingDb: -6 });
    const out = [new Float32Array(x.length)];
    let n = limiter.process([x], x.length, out);
    const tail = [new Float32Array(limiter.latency)];
    n += limiter.flush(tail);
    const y = new Float32Array(x.length);
    y.set(out[0].subarray(0, x.length - limiter.latency));
    y.set(tail[0], x.length - limiter.latency);
    assert.equal(n, x.length);
    const gain = 10 ** (6 / 20);
    const ceiling = 10 ** (-6 / 20);
    const lookahead = rate * 0.005;
    let previous = 1;
    let worstStep = 0;
    for (let i = 0; i < x.length; i++) {
      assert.ok(Math.abs(y[i]) <= ceiling, `sample ${i} is ${y[i]}`);
      if (Math.abs(x[i]) < 0.005) continue; // the ratio is meaningless near zero crossings
      const g = y[i] / (gain * x[i]);
      if (i > 0 && Math.abs(x[i - 1]) >= 0.005) worstStep = Math.max(worstStep, Math.abs(g - previous));
      previous = g;
    }
    assert.ok(worstStep <= 1.05 / lookahead, `the gain jumped by ${worstStep} in one frame`);
    assert.ok(limiter.minGain < 0.5, 'the limiter acted');
  });

  it('limits a file that starts on its loudest peak: the ramp is complete from the first frame', () => {
    const rate = 48_000;
    const x = sine(rate, 997, -1, 0.2, 90); // starts at its crest
    const limiter = new TruePeakLimiter({ sampleRate: rate, channels: 1, gainDb: 6, ceilingDb: -6 });
    const out = [new Float32Array(x.length)];
    const written = limiter.process([x], x.length, out);
    const ceiling = 10 ** (-6 / 20);
    for (let i = 0; i < written; i++)
      assert.ok(
        Math.abs(out[0][i]) <= ceiling,
        `frame ${i} is ${(20 * Math.log10(Math.abs(out[0][i]))).toFixed(2)} dBFS`,
      );
  });

  it('limits the same, sample for sample, when an earlier pass over the input lets it skip the stretches it found under the ceiling', () => {
    const rate = 44_100;
    const [left, right] = speechLike(rate, 2, 5, -22)(rate * 20);
    // One pass without what passes learn, and three with (gains about the ones a search for the target tries).
    const limit = (gainDb: number, knownPeaks?: EnvelopeBounds) => {
      const limiter = new TruePeakLimiter({ sampleRate: rate, channels: 2, gainDb, ceilingDb: -1, knownPeaks });
      const out = [new Float32Array(left.length), new Float32Array(left.length)];
      const tail = [new Float32Array(limiter.latency), new Float32Array(limiter.latency)];
      const n = limiter.process([left, right], left.length, out);
      limiter.flush(tail);
      const whole = out.map((channel, c) => {
        const all = new Float32Array(n + limiter.latency);
        all.set(channel.subarray(0, n));
        all.set(tail[c], n);
        return all;
      });
      return { out: whole, minGain: limiter.minGain };
    };
    const knownPeaks = new EnvelopeBounds();
    for (const gainDb of [14, 14.6, 13.8]) {
      const alone = limit(gainDb);
      const learnt = limit(gainDb, knownPeaks);
      assert.ok(alone.minGain < 0.8, `the limiter acts at +${gainDb} dB`);
      assert.equal(learnt.minGain, alone.minGain);
      for (let c = 0; c < 2; c++) {
        const differ = learnt.out[c].findIndex((y, i) => y !== alone.out[c][i]);
        assert.equal(differ, -1, `channel ${c + 1} at +${gainDb} dB differs from frame ${differ}`);
      }
    }
  });
});
