// Speech quality of the FINCH chain (high-pass and noise reduction at level 100, before the loudness stage) against
// ffmpeg's own denoiser afftdn, on the same noisy files in the same run; then the leveler (LARK vs
// FINCH) on two speakers 12 LU apart.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoudnessMeter } from '../src/audio/loudness-meter';
import type { EnhanceOptions } from '../src/enhance/chain-types';
import { mix, whiteNoise } from '../test/enhance/test-media';
import { hum, pink, RATE, speech } from './quality-media';
import { align, magnitudeSegmentalSnr, pauseFloorDb, segmentalSnr, siSdr } from './quality-metrics';
import { HIGHPASS, qualityRunners } from './quality-runners';
import type { BenchReport } from './run';

const REPEATS = 3; // the 10.6 s sample three times: 32 s per condition
const SNRS = [0, 5, 10];
const AFFTDN = { 'afftdn=tn=1': `${HIGHPASS},afftdn=tn=1`, afftdn: `${HIGHPASS},afftdn` } as const;

interface Scores {
  segSnr: number;
  siSdr: number;
  pauseDb: number;
  magnitude: number;
}

export async function run(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-quality-'));
  const { chain, ffmpegFilter } = qualityRunners(dir);
  try {
    const clean = await speech(dir, 'clean', REPEATS);
    const length = clean.length;
    const otherVoice = (await speech(dir, 'other', REPEATS + 2, 'asetrate=20000,aresample=48000')).slice(
      RATE * 2.5,
      RATE * 2.5 + length,
    );
    const noises: Record<string, Float32Array> = {
      white: whiteNoise(length, 1),
      pink: pink(length, 2),
      hum: hum(length),
      'second voice': otherVoice,
    };

    // References: the clean speech through each side's filters, noise reduction off.
    const oursReference = await chain(clean, { model: 'FINCH', level: 100, stages: { denoise: false } });
    const ffmpegReference = await ffmpegFilter(clean, HIGHPASS);
    const score = (reference: Float32Array, output: Float32Array): Scores => {
      const aligned = align(reference, output, RATE);
      return {
        segSnr: segmentalSnr(reference, aligned, RATE),
        siSdr: siSdr(reference, aligned),
        pauseDb: pauseFloorDb(clean, aligned, RATE),
        magnitude: magnitudeSegmentalSnr(clean, aligned, RATE),
      };
    };

    // Each system's gains are given two ways: the whole chain against the input as recorded (the
    // high-pass's own work on rumble and hum counts), and its noise reduction alone against the same
    // input through its high-pass.
    const rows: string[][] = [
      [
        'noise, input SNR',
        'input segSNR: as recorded / high-passed',
        'ours: segSNR gain, whole chain (noise reduction alone) / SI-SDR gain / pause floor / magnitude segSNR',
        'afftdn=tn=1: same',
        'afftdn: same',
        'ours / best afftdn (whole-chain segSNR gain)',
      ],
    ];
    const goalCases: Array<{ chain: number; alone: number; best: number; floor: number; floorAlone: number }> = [];
    for (const [name, noise] of Object.entries(noises)) {
      for (const snr of SNRS) {
        const noisy = mix(clean, noise, snr);
        const raw = score(clean, noisy);
        const oursIn = score(
          oursReference,
          await chain(noisy, { model: 'FINCH', level: 100, stages: { denoise: false } }),
        );
        const ours = score(oursReference, await chain(noisy, { model: 'FINCH', level: 100 }));
        const ffmpegIn = score(ffmpegReference, await ffmpegFilter(noisy, HIGHPASS));
        const theirs = await Promise.all(
          Object.values(AFFTDN).map(async (filter) => score(ffmpegReference, await ffmpegFilter(noisy, filter))),
        );
        const cell = (out: Scores, highPassed: Scores) =>
          `${signed(out.segSnr - raw.segSnr)} (${signed(out.segSnr - highPassed.segSnr)}) / ${signed(out.siSdr - raw.siSdr)} / ${signed(out.pauseDb - raw.pauseDb)} dB / ${out.magnitude.toFixed(1)} (in ${raw.magnitude.toFixed(1)})`;
        const best = Math.max(...theirs.map((t) => t.segSnr - raw.segSnr));
        const gain = ours.segSnr - raw.segSnr;
        rows.push([
          `${name}, ${snr} dB`,
          `${raw.segSnr.toFixed(1)} / ${oursIn.segSnr.toFixed(1)} dB`,
          cell(ours, oursIn),
          cell(theirs[0], ffmpegIn),
          cell(theirs[1], ffmpegIn),
          best > 0 ? (gain / best).toFixed(1) : 'afftdn <= 0',
        ]);
        if (name !== 'second voice' && snr < 10)
          goalCases.push({
            chain: gain,
            alone: ours.segSnr - oursIn.segSnr,
            best,
            floor: ours.pauseDb - raw.pauseDb,
            floorAlone: ours.pauseDb - oursIn.pauseDb,
          });
      }
    }
    const mean = (pick: (c: (typeof goalCases)[number]) => number) =>
      goalCases.reduce((sum, c) => sum + pick(c), 0) / goalCases.length;
    const cleanScore = score(oursReference, await chain(clean, { model: 'FINCH', level: 100 })).segSnr;
    rows.push([
      '**goal** mean over white, pink, hum at 0 and 5 dB: segSNR gain',
      '',
      `${signed(mean((c) => c.chain))} dB (goal >= +6); noise reduction alone ${signed(mean((c) => c.alone))} dB`,
      `best afftdn ${signed(mean((c) => c.best))} dB`,
      '',
      `${(mean((c) => c.chain) / mean((c) => c.best)).toFixed(1)} (goal > 2)`,
    ]);
    rows.push([
      '**goal** same cases: noise floor in pauses',
      '',
      `${signed(mean((c) => c.floor))} dB (goal <= -15); noise reduction alone ${signed(mean((c) => c.floorAlone))} dB`,
      '',
      '',
      '',
    ]);
    rows.push([
      '**goal** clean input: segSNR of the output against its reference',
      '',
      `${cleanScore.toFixed(1)} dB (goal >= 20)`,
      '',
      '',
      '',
    ]);

    const leveler = await levelerRows(clean, chain);
    return {
      title: `Speech quality: the FINCH chain against ffmpeg afftdn, ${(length / RATE).toFixed(0)} s of speech per case, and the leveler`,
      table: [...rows, ...leveler],
      notes: [
        "Each cell: gain in segmental SNR (10 ms frames clamped to -10..35 dB, silent reference frames skipped, best alignment within ±50 ms (afftdn delays by about 25 ms), output gain matched by least squares), gain in SI-SDR, change of the noise floor in the speech pauses, and the magnitude-spectrum segmental SNR against the clean speech itself (20 ms Hann frames), with the input's in brackets.",
        "Whole chain: the output against its reference, less the input as recorded against the clean speech as recorded. Noise reduction alone (in brackets): less the input through the same high-pass against the reference, so only the denoiser is credited. Pause floor and SI-SDR gains are the whole chain's.",
        "Ours: the FINCH chain (80 Hz high-pass, RNNoise at level 100) before the loudness stage, its reference the clean speech through the same chain with noise reduction off (so the high-pass's own phase counts as no damage). afftdn: ffmpeg with the chain's own high-pass before it (two `highpass` biquads at 80 Hz, Q 0.54 and 1.31: a 4th-order Butterworth; ffmpeg's default corner is 3000 Hz), its reference the clean speech through that high-pass.",
        "Noises are made in the run: white and pink from a seed, 50 Hz hum with 9 harmonics, and a second voice (the sample pitched up by a quarter, 2.5 s later). SNR is set against the speech's active level.",
        "Leveler rows: turns of the sample alternating at -30 and -18 LUFS with 1 s pauses and pink noise at -60 dBFS; loudness of each speaker's turns measured with our BS.1770 meter; the noise in pauses is measured in the middle of the pauses between turns.",
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const signed = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;

/** Two speakers 12 LU apart, through LARK and through FINCH. */
async function levelerRows(
  clean: Float32Array,
  chain: (samples: Float32Array, options: EnhanceOptions) => Promise<Float32Array>,
): Promise<string[][]> {
  const turn = Math.round(RATE * 5);
  const pause = RATE;
  const sampleLufs = lufs(clean.subarray(0, turn));
  const levels = [-30, -18, -30, -18, -30, -18];
  const total = levels.length * (turn + pause);
  const input = pink(total, 7).map((n) => n * 10 ** (-60 / 20) * 0.3);
  levels.forEach((level, t) => {
    const gain = 10 ** ((level - sampleLufs) / 20);
    for (let i = 0; i < turn; i++) input[t * (turn + pause) + i] += clean[(t * turn + i) % clean.length] * gain;
  });
  const speakerGap = (signal: Float32Array) => {
    const speaker = (level: number) => {
      const meter = new LoudnessMeter(RATE, 1, 0);
      levels.forEach(
        (l, t) => l === level && meter.add([signal.slice(t * (turn + pause), t * (turn + pause) + turn)], turn),
      );
      return meter.finish().integratedLufs;
    };
    return speaker(-18) - speaker(-30);
  };
  const pauseLevel = (signal: Float32Array) => {
    let sum = 0;
    let count = 0;
    for (let t = 0; t < levels.length; t++) {
      for (let i = t * (turn + pause) + turn + 0.2 * RATE; i < (t + 1) * (turn + pause) - 0.2 * RATE; i++)
        sum += signal[i] ** 2;
      count += 0.6 * RATE;
    }
    return 10 * Math.log10(sum / count);
  };
  const lark = await chain(input, { model: 'LARK', level: 100 });
  const finch = await chain(input, { model: 'FINCH', level: 100 });
  return [
    [
      '**leveler** speakers at -30 and -18 LUFS: difference after the chain',
      `${speakerGap(input).toFixed(1)} LU before`,
      `LARK ${speakerGap(lark).toFixed(1)} LU (goal <= 3)`,
      `FINCH ${speakerGap(finch).toFixed(1)} LU`,
      '',
      '',
    ],
    [
      '**leveler** noise in the pauses between turns, LARK against FINCH',
      '',
      `${signed(pauseLevel(lark) - pauseLevel(finch))} dB (goal <= +1)`,
      '',
      '',
      '',
    ],
  ];
}

function lufs(samples: Float32Array): number {
  const meter = new LoudnessMeter(RATE, 1, 0);
  meter.add([samples], samples.length);
  return meter.finish().integratedLufs;
}
