// Where the LARK_V2 chain stands against DeepFilterNet3 alone, stage by stage, on the real recordings of
// the denoiser benchmark (real-recordings.ts): six clips in recorded room noise and 8-talker babble at 5
// and 10 dB SNR. Each row adds one stage to the row above, from the network alone behind the chain's own
// 80 Hz high-pass to the file the chain delivers; then LARK_V2's attenuation cap (the enhancement level)
// where other voices are the noise (babble, a second voice), beside the input and FINCH.
// `npm run bench -- chain-stages` (about 4 minutes of CPU) runs it alone and updates its section.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enhanceWavFile } from '../src/enhance/chain';
import type { EnhanceOptions } from '../src/enhance/chain-types';
import { DfnStream } from '../src/enhance/dfn-stream';
import { buildChannelFilters, planFilters } from '../src/enhance/filter-plan';
import { mix, writeFloatWav } from '../test/enhance/test-media';
import { RATE, readMono } from './quality-media';
import { align, segmentalSiSdr, siSdr } from './quality-metrics';
import { qualityRunners } from './quality-runners';
import { loop, realRecordings } from './real-recordings';
import type { BenchReport } from './run';
import { stoi } from './stoi';

const SNRS = [5, 10];
/** A rate the chain resamples from and back to (to 48 kHz for the network). */
const RESAMPLED_RATE = 44_100;

interface Scores {
  segSiSdr: number[];
  siSdr: number[];
  stoi: number[];
}

export async function run(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-chain-stages-'));
  try {
    const { chain, ffmpegFilter } = qualityRunners(dir);
    const { clips, babble, room } = await realRecordings(dir);
    let files = 0;
    // The chain on a file at another rate: its output at that rate, as delivered.
    const chainAt = async (samples: Float32Array, rate: number, options: EnhanceOptions) => {
      const input = join(dir, `r${files++}.wav`);
      const output = join(dir, `r${files++}.wav`);
      await writeFloatWav(input, rate, [samples]);
      await enhanceWavFile(input, output, options);
      return readMono(output);
    };
    const resample = (samples: Float32Array) => ffmpegFilter(samples, `aresample=${RESAMPLED_RATE}:resampler=soxr`);
    const lark = (stages: EnhanceOptions['stages'], level = 100): EnhanceOptions => ({
      model: 'LARK_V2',
      level,
      stages,
    });
    // The stages, each row adding one to the row before.
    const ladder: Array<{ name: string; run: (input: Float32Array) => Promise<Float32Array> }> = [
      {
        name: 'DeepFilterNet3 alone (from its own start values), behind the 80 Hz high-pass',
        run: (x) => dfnAlone(x, 0),
      },
      { name: '+ the features normalised from the first 2 s (PRIME_FRAMES)', run: (x) => dfnAlone(x, undefined) },
      {
        name: '+ the mix by level (none at 100) and the pre-gain for quiet files: LARK_V2, hum and leveler off',
        run: (x) => chain(x, lark({ humRemoval: false, leveler: false })),
      },
      { name: '+ the hum stage (LARK_V2, leveler off)', run: (x) => chain(x, lark({ leveler: false })) },
      { name: '+ the leveler: LARK_V2 as delivered', run: (x) => chain(x, lark({})) },
    ];
    const scores = new Map<string, Scores>();
    const add = (key: string, reference: Float32Array, output: Float32Array, rate: number) => {
      const aligned = align(reference, output, rate);
      const row = scores.get(key) ?? { segSiSdr: [], siSdr: [], stoi: [] };
      scores.set(key, row);
      row.segSiSdr.push(segmentalSiSdr(reference, aligned, rate));
      row.siSdr.push(siSdr(reference, aligned));
      row.stoi.push(stoi(reference, aligned, rate));
    };
    const otherVoice = async (speech: Float32Array) =>
      loop(await ffmpegFilter(speech, 'asetrate=60000,aresample=48000'), speech.length, Math.round(speech.length / 2));
    const levels = [100, 60, 45, 30];
    for (const [c, clip] of clips.entries()) {
      const speech = clip.samples;
      const reference = await chain(speech, { model: 'FINCH', level: 100, stages: { denoise: false } });
      const speechResampled = await resample(speech);
      const referenceResampled = await chainAt(speechResampled, RESAMPLED_RATE, {
        model: 'FINCH',
        level: 100,
        stages: { denoise: false },
      });
      const noises: Record<string, Float32Array> = {
        room: loop(room, speech.length, Math.round(c * 0.7 * RATE)),
        babble: loop(babble, speech.length, Math.round(c * 1.1 * RATE)),
        'second voice': await otherVoice(speech),
      };
      for (const [noise, samples] of Object.entries(noises)) {
        for (const snr of SNRS) {
          const input = mix(speech, samples, snr);
          if (noise !== 'second voice') {
            for (const stage of ladder) {
              const output = await stage.run(input);
              add(stage.name, reference, output, RATE);
              add(`${stage.name}|${noise}`, reference, output, RATE);
            }
            const atRate = await chainAt(await resample(input), RESAMPLED_RATE, lark({}));
            add('resampled', referenceResampled, atRate, RESAMPLED_RATE);
          }
          if (noise === 'room') continue;
          add(`input|${noise}`, speech, input, RATE);
          add(`FINCH|${noise}`, reference, await chain(input, { model: 'FINCH', level: 100 }), RATE);
          for (const level of levels)
            add(`LARK_V2 ${level}|${noise}`, reference, await chain(input, lark({}, level)), RATE);
        }
      }
      console.error(`  ${clip.name}: done`);
    }
    const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
    const of = (key: string) => {
      const row = scores.get(key)!;
      return { seg: mean(row.segSiSdr), si: mean(row.siSdr), stoi: mean(row.stoi) };
    };
    const signed = (value: number, digits: number) => `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
    const table: string[][] = [
      ['stage', 'segmental SI-SDR', "the stage's share", 'room / babble', 'SI-SDR', 'STOI', "the stage's share"],
    ];
    let before: ReturnType<typeof of> | undefined;
    for (const stage of ladder) {
      const all = of(stage.name);
      const [roomRow, babbleRow] = [of(`${stage.name}|room`), of(`${stage.name}|babble`)];
      table.push([
        stage.name,
        `${all.seg.toFixed(2)} dB`,
        before ? `${signed(all.seg - before.seg, 2)} dB` : 'reference',
        `${roomRow.seg.toFixed(2)} / ${babbleRow.seg.toFixed(2)} dB`,
        `${all.si.toFixed(2)} dB`,
        all.stoi.toFixed(3),
        before ? signed(all.stoi - before.stoi, 3) : 'reference',
      ]);
      before = all;
    }
    const resampled = of('resampled');
    table.push([
      `LARK_V2 as delivered, the same mixtures at ${RESAMPLED_RATE / 1000} kHz (resampled to 48 kHz for the network and back)`,
      `${resampled.seg.toFixed(2)} dB`,
      `${signed(resampled.seg - before!.seg, 2)} dB against 48 kHz`,
      '',
      `${resampled.si.toFixed(2)} dB`,
      resampled.stoi.toFixed(3),
      signed(resampled.stoi - before!.stoi, 3),
    ]);
    for (const noise of ['babble', 'second voice']) {
      for (const system of ['input', 'FINCH', ...levels.map((level) => `LARK_V2 ${level}`)]) {
        const row = of(`${system}|${noise}`);
        const name = system.startsWith('LARK_V2')
          ? `${system === 'LARK_V2 100' ? 'LARK_V2 at level 100 (no cap)' : `LARK_V2 at level ${system.slice(8)} (cap ${0.4 * Number(system.slice(8))} dB)`}`
          : system;
        table.push([
          `${noise}: ${name}`,
          `${row.seg.toFixed(2)} dB`,
          '',
          '',
          `${row.si.toFixed(2)} dB`,
          row.stoi.toFixed(3),
          '',
        ]);
      }
    }
    return {
      title: 'The LARK_V2 chain stage by stage against DeepFilterNet3 alone (real recordings)',
      table,
      writtenAlone: true,
      notes: [
        `${clips.length} real clips (bench/real-recordings.ts) at 48 kHz in recorded room noise and 8-talker babble at ${SNRS.join(' and ')} dB SNR: ${clips.length * 2 * SNRS.length} mixtures per stage row; the cap rows: babble and a second voice (the clip a quarter higher, half its length later), ${clips.length * SNRS.length} mixtures each.`,
        "Every output is scored against the clean clip through the chain's 80 Hz high-pass (the input row: against the clean clip), aligned and scaled as in the denoiser benchmark; segmental SI-SDR: 0.5 s windows, each scaled on its own (a gain that moves within a window is counted as distortion, one that moves between windows is not).",
        'At level 100 the mix by level is no mix (no cap); the pre-gain raises only files whose speech is under -26 dBFS, and the hum stage subtracts only hum it finds: on these mixtures neither moves a sample, so their rows equal the row above.',
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The high-pass then DeepFilterNet3 frame by frame, nothing else; `primeFrames` as DfnStream takes it. */
async function dfnAlone(input: Float32Array, primeFrames: number | undefined): Promise<Float32Array> {
  const samples = input.slice();
  buildChannelFilters(planFilters(true, null), RATE).process(samples, samples.length);
  const stream = await DfnStream.create(Infinity, { primeFrames });
  try {
    const out = new Float32Array(samples.length);
    const head = await stream.push(samples, samples.length);
    out.set(head);
    out.set(await stream.flush(), head.length);
    return out;
  } finally {
    stream.destroy();
  }
}

if (require.main === module)
  run().then(
    (report) => console.log(report.table.map((row) => `| ${row.join(' | ')} |`).join('\n')),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
