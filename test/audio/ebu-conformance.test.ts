// The EBU's own test signals (Tech 3341 for loudness and true peak, Tech 3342 for loudness range),
// synthesized here and measured through WAV files, as a user's file would be.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kWeightingFilters } from '../../src/audio/k-weighting';
import { measureWavFile } from '../../src/audio/measure';
import { PeakInterpolator } from '../../src/audio/peak-interpolator';
import { encodeWav, sine, sineSteps, type TestFormat } from '../fixtures/audio';

describe('EBU conformance (Tech 3341 / 3342)', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'ebu-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  async function measure(format: TestFormat, planar: Float32Array[]) {
    const path = join(dir, `case-${Math.random().toString(36).slice(2)}.wav`);
    await writeFile(path, encodeWav(format, planar));
    return measureWavFile(path);
  }
  const stereo48 = { sampleRate: 48_000, channels: 2, bits: 24 } as const;
  const stereo = (samples: Float32Array) => [samples, samples];

  it('derives the 48 kHz K-weighting coefficients of BS.1770-4 Table 1 and 2', () => {
    const [shelf, highPass] = kWeightingFilters(48_000);
    const table = {
      b0: 1.53512485958697,
      b1: -2.69169618940638,
      b2: 1.19839281085285,
      a1: -1.69065929318241,
      a2: 0.73248077421585,
    };
    for (const [name, value] of Object.entries(table))
      assert.ok(Math.abs(shelf[name as keyof typeof table] - value) < 1e-8, `shelf ${name}`);
    assert.ok(Math.abs(highPass.a1 - -1.99004745483398) < 1e-8);
    assert.ok(Math.abs(highPass.a2 - 0.99007225036621) < 1e-8);
  });

  it('interpolates between samples with every phase flat within 0.02 dB up to 0.42 fs, at 16, 44.1 and 48 kHz', () => {
    for (const rate of [16_000, 44_100, 48_000]) checkPhases(new PeakInterpolator(rate));
  });

  function checkPhases(interpolator: PeakInterpolator) {
    interpolator.phases.forEach((c, index) => {
      const offset = (index + 1) / interpolator.oversampling;
      for (let f = 0.01; f <= 0.42; f += 0.01) {
        let re = 0;
        let im = 0;
        for (let j = 0; j < c.length; j++) {
          const delay = j - (interpolator.before - 1) - offset;
          re += c[j] * Math.cos(2 * Math.PI * f * delay);
          im += c[j] * Math.sin(2 * Math.PI * f * delay);
        }
        const db = 20 * Math.log10(Math.hypot(re, im));
        assert.ok(
          Math.abs(db) < 0.02,
          `${interpolator.oversampling}x, phase ${index + 1} at ${f.toFixed(2)} fs: ${db.toFixed(4)} dB`,
        );
      }
    });
  }

  it('oversamples to at least 192 kHz, twice that where 192 kHz is no multiple of the rate', () => {
    assert.deepEqual(
      [8000, 16_000, 44_100, 48_000, 96_000].map((rate) => new PeakInterpolator(rate).oversampling),
      [24, 12, 9, 4, 4],
    );
  });

  const loudnessCases: Array<[string, Array<[number, number]>]> = [
    ['case 1: -23 dBFS for 20 s', [[-23, 20]]],
    ['case 2: -33 dBFS for 20 s', [[-33, 20]]],
    [
      'case 3: -36, -23, -36 dBFS',
      [
        [-36, 10],
        [-23, 60],
        [-36, 10],
      ],
    ],
    [
      'case 4: -72, -36, -23, -36, -72 dBFS',
      [
        [-72, 10],
        [-36, 10],
        [-23, 60],
        [-36, 10],
        [-72, 10],
      ],
    ],
    [
      'case 5: -26, -20, -26 dBFS',
      [
        [-26, 20],
        [-20, 20.1],
        [-26, 20],
      ],
    ],
  ];
  for (const [name, steps] of loudnessCases) {
    const expected = name.startsWith('case 2') ? -33 : -23;
    it(`Tech 3341 ${name}: ${expected}.0 LUFS +/-0.1`, async () => {
      const result = await measure(stereo48, stereo(sineSteps(48_000, steps)));
      assert.ok(Math.abs(result.integratedLufs - expected) <= 0.1, `${result.integratedLufs}`);
    });
  }

  it('Tech 3341 case 6: 5.0 channels (L R C at -28/-28/-24, Ls Rs at -30 dBFS): -23.0 LUFS, surrounds weighted +1.5 dB', async () => {
    const levels = [-28, -28, -24, -30, -30];
    const result = await measure(
      { sampleRate: 48_000, channels: 5, bits: 24 },
      levels.map((dbfs) => sine(48_000, 1000, dbfs, 20)),
    );
    assert.ok(Math.abs(result.integratedLufs - -23) <= 0.1, `${result.integratedLufs}`);
  });

  it('excludes the LFE channel of a 5.1 file (WAVE_FORMAT_EXTENSIBLE mask)', async () => {
    const silent = new Float32Array(48_000 * 5);
    const tone = sine(48_000, 1000, -20, 5);
    const onlyLfe = await measure({ sampleRate: 48_000, channels: 6, bits: 24, channelMask: 0x3f }, [
      silent,
      silent,
      silent,
      tone,
      silent,
      silent,
    ]);
    assert.equal(onlyLfe.integratedLufs, -Infinity);
    assert.ok(onlyLfe.truePeakDbtp > -20.1, 'the LFE still counts for the true peak');
  });

  const peakCases: Array<[string, number, number, number, number]> = [
    // name, frequency (Hz at 48 kHz), dBFS, phase (degrees), expected dBTP
    ['case 15: fs/4 at -6 dBFS, phase 0', 12_000, -6, 0, -6],
    ['case 16: fs/4 at -6 dBFS, phase 45', 12_000, -6, 45, -6],
    ['case 17: fs/6 at -6 dBFS, phase 60', 8_000, -6, 60, -6],
    ['case 18: fs/8 at -6 dBFS, phase 67.5', 6_000, -6, 67.5, -6],
    ['case 19: fs/4 at +3 dBFS, phase 45', 12_000, 3, 45, 3],
  ];
  for (const [name, frequency, dbfs, phase, expected] of peakCases) {
    it(`Tech 3341 ${name}: ${expected} dBTP +0.2/-0.4`, async () => {
      const tone = sine(48_000, frequency, dbfs, 1, phase);
      const result = await measure({ sampleRate: 48_000, channels: 2, bits: 32, float: true }, stereo(tone));
      assert.ok(
        result.truePeakDbtp <= expected + 0.2 && result.truePeakDbtp >= expected - 0.4,
        `${result.truePeakDbtp}`,
      );
      if (phase !== 0) assert.ok(result.samplePeakDbfs < expected - 0.5, 'the sample peak alone would miss it');
    });
  }

  const rangeCases: Array<[string, Array<[number, number]>, number]> = [
    [
      'case 1: -20 then -30 dBFS',
      [
        [-20, 20],
        [-30, 20],
      ],
      10,
    ],
    [
      'case 2: -20 then -15 dBFS',
      [
        [-20, 20],
        [-15, 20],
      ],
      5,
    ],
    [
      'case 3: -40 then -20 dBFS',
      [
        [-40, 20],
        [-20, 20],
      ],
      20,
    ],
    [
      'case 4: -50, -35, -20, -35, -50 dBFS',
      [
        [-50, 20],
        [-35, 20],
        [-20, 20],
        [-35, 20],
        [-50, 20],
      ],
      15,
    ],
  ];
  for (const [name, steps, expected] of rangeCases) {
    it(`Tech 3342 ${name}: LRA ${expected} LU +/-1`, async () => {
      const result = await measure(stereo48, stereo(sineSteps(48_000, steps)));
      assert.ok(Math.abs(result.loudnessRangeLu - expected) <= 1, `${result.loudnessRangeLu}`);
    });
  }

  it('measures the same tone alike at 8 kHz, 44.1 kHz and 192 kHz (coefficients derived per rate)', async () => {
    for (const rate of [8000, 11_025, 44_100, 96_000, 192_000]) {
      const result = await measure({ sampleRate: rate, channels: 2, bits: 16 }, stereo(sine(rate, 1000, -23, 10)));
      assert.ok(Math.abs(result.integratedLufs - -23) <= 0.1, `${rate} Hz: ${result.integratedLufs}`);
    }
  });

  it('gives -Infinity for digital silence and for a tone under the -70 LUFS gate', async () => {
    const silence = await measure(stereo48, stereo(new Float32Array(48_000 * 3)));
    assert.equal(silence.integratedLufs, -Infinity);
    assert.equal(silence.truePeakDbtp, -Infinity);
    const faint = await measure({ ...stereo48, float: true, bits: 32 }, stereo(sine(48_000, 1000, -75, 3)));
    assert.equal(faint.integratedLufs, -Infinity);
  });
});
