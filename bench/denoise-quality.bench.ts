// The denoisers side by side on real recordings, scored with the measures speech-enhancement work uses:
// SI-SDR, segmental SI-SDR, STOI, ESTOI against the clean speech, and DNSMOS P.835 on the output alone.
// Rows: the noisy input, FINCH (the fast model), LARK_V2 (the default), and ffmpeg's afftdn; each model
// runs through the engine's own chain by name, so the table follows whatever noise reduction it uses.
// `npm run bench -- denoise-quality` runs this section alone. DENOISE_QUALITY_CLIPS=0,3 runs those clips only
// (numbered from 0), for a look at a part when the whole is too long for the machine's load; run alone
// (`node dist/bench/denoise-quality.bench.js`), so that RESULTS.md keeps the whole run's table.
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EnhancementModel } from '../src/enhance/chain-types';
import { mix, whiteNoise } from '../test/enhance/test-media';
import type { DnsmosScores } from './dnsmos';
import { DnsmosThread } from './dnsmos-thread';
import { hum, pink, RATE } from './quality-media';
import { align, segmentalSiSdr, siSdr } from './quality-metrics';
import { HIGHPASS, qualityRunners } from './quality-runners';
import { DEBIAN_CACHE, loop, realRecordings } from './real-recordings';
import type { BenchReport } from './run';
import { intelligibility } from './stoi';

const SNRS = [0, 5, 10];
const MODELS: EnhancementModel[] = ['FINCH', 'LARK_V2'];
const AFFTDN = `${HIGHPASS},afftdn=tn=1`;
const SYSTEMS = ['input', ...MODELS, 'ffmpeg afftdn'] as const;
type System = (typeof SYSTEMS)[number];

interface Scores extends DnsmosScores {
  siSdr: number;
  segSiSdr: number;
  stoi: number;
  estoi: number;
}

/** Outputs handed to the DNSMOS thread and not yet rated, at most (5 s at 48 kHz: 1 MB each). */
const MAX_WAITING_RATINGS = 12;

const GOALS = { segSiSdrDb: 4, stoi: 0.015, ovrl: 0.1, cleanSegSiSdrDb: 30, cleanSig: 0.05 };

export async function run(): Promise<BenchReport> {
  const started = Date.now();
  const cpuAtStart = process.cpuUsage();
  const load = loadavg()[0];
  const dir = await mkdtemp(join(tmpdir(), 'bench-denoise-quality-'));
  const dnsmos = new DnsmosThread();
  try {
    const { chain, ffmpegFilter } = qualityRunners(dir);
    const recordings = await realRecordings(dir);
    const { babble, room } = recordings;
    const clips = chosenClips(recordings.clips);
    const noisy: Array<{ noise: string; system: System; scores: Scores }> = [];
    const clean: Array<{
      clip: string;
      system: System;
      segSiSdr: number;
      sig: number;
      bak: number;
      inputSig: number;
      inputBak: number;
    }> = [];
    // The speech-quality bench's second voice: the clip itself a quarter higher and half its length later.
    const otherVoice = async (speech: Float32Array) =>
      loop(await ffmpegFilter(speech, 'asetrate=60000,aresample=48000'), speech.length, Math.round(speech.length / 2));
    // DNSMOS runs on its own thread while the loop goes on; at most a few outputs wait for it (memory).
    const ratings: Array<Promise<void>> = [];
    let ratingFailure: Error | undefined;
    const rate = async (output: Float32Array, use: (scores: DnsmosScores) => void) => {
      if (ratings.length >= MAX_WAITING_RATINGS) await ratings[ratings.length - MAX_WAITING_RATINGS];
      ratings.push(
        dnsmos.score(output, RATE).then(use, (err: unknown) => {
          ratingFailure ??= err instanceof Error ? err : new Error(String(err));
        }),
      );
    };

    for (const [c, clip] of clips.entries()) {
      const speech = clip.samples;
      const length = speech.length;
      // References: the clean speech through each side's high-pass, noise reduction off (the high-pass's
      // phase is no damage); FINCH with noise reduction off is the chain's 80 Hz high-pass alone.
      const chainReference = await chain(speech, { model: 'FINCH', level: 100, stages: { denoise: false } });
      const ffmpegReference = await ffmpegFilter(speech, HIGHPASS);
      const through = async (system: System, input: Float32Array) =>
        system === 'input'
          ? input
          : system === 'ffmpeg afftdn'
            ? ffmpegFilter(input, AFFTDN)
            : chain(input, { model: system, level: 100 });
      const referenceOf = (system: System) =>
        system === 'input' ? speech : system === 'ffmpeg afftdn' ? ffmpegReference : chainReference;

      const noises: Record<string, Float32Array> = {
        'room (recorded)': loop(room, length, Math.round(c * 0.7 * RATE)),
        'babble (8 talkers)': loop(babble, length, Math.round(c * 1.1 * RATE)),
        'white (synthetic)': whiteNoise(length, 40 + c),
        'pink (synthetic)': pink(length, 20 + c),
        'hum (synthetic)': hum(length),
        'second voice (synthetic)': await otherVoice(speech),
      };
      for (const [noise, samples] of Object.entries(noises)) {
        for (const snr of SNRS) {
          const input = mix(speech, samples, snr);
          for (const system of SYSTEMS) {
            const output = await through(system, input);
            const reference = referenceOf(system);
            const aligned = align(reference, output, RATE);
            const scores: Scores = {
              siSdr: siSdr(reference, aligned),
              segSiSdr: segmentalSiSdr(reference, aligned, RATE),
              ...intelligibility(reference, aligned, RATE),
              sig: NaN,
              bak: NaN,
              ovrl: NaN,
            };
            noisy.push({ noise, system, scores });
            await rate(output, (rated) => Object.assign(scores, rated));
          }
        }
      }
      const cleanRows = SYSTEMS.slice(1).map((system) => ({
        clip: clip.name,
        system,
        segSiSdr: NaN,
        sig: NaN,
        bak: NaN,
        inputSig: NaN,
        inputBak: NaN,
      }));
      await rate(speech, ({ sig, bak }) =>
        cleanRows.forEach((row) => Object.assign(row, { inputSig: sig, inputBak: bak })),
      );
      for (const row of cleanRows) {
        const output = await through(row.system, speech);
        const reference = referenceOf(row.system);
        row.segSiSdr = segmentalSiSdr(reference, align(reference, output, RATE), RATE);
        await rate(output, ({ sig, bak }) => Object.assign(row, { sig, bak }));
        clean.push(row);
      }
      console.error(`  ${clip.name}: done (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
    await Promise.all(ratings);
    if (ratingFailure) throw ratingFailure;

    const meanOf = (system: System, noise?: string) => {
      const cases = noisy.filter((c) => c.system === system && (!noise || c.noise === noise));
      const mean = (key: keyof Scores) => cases.reduce((sum, c) => sum + c.scores[key], 0) / cases.length;
      return {
        siSdr: mean('siSdr'),
        segSiSdr: mean('segSiSdr'),
        stoi: mean('stoi'),
        estoi: mean('estoi'),
        sig: mean('sig'),
        bak: mean('bak'),
        ovrl: mean('ovrl'),
      };
    };
    const cells = (s: Scores) => [
      `${s.siSdr.toFixed(1)} dB`,
      `${s.segSiSdr.toFixed(1)} dB`,
      s.stoi.toFixed(3),
      s.estoi.toFixed(3),
      s.sig.toFixed(2),
      s.bak.toFixed(2),
      s.ovrl.toFixed(2),
    ];
    const noiseNames = [...new Set(noisy.map((c) => c.noise))];
    const rows: string[][] = [
      ['system', 'SI-SDR', 'segmental SI-SDR', 'STOI', 'ESTOI', 'DNSMOS SIG', 'DNSMOS BAK', 'DNSMOS OVRL'],
      ...SYSTEMS.map((system) => [`**${system}**, all noisy cases`, ...cells(meanOf(system))]),
      ...noiseNames.flatMap((noise) =>
        SYSTEMS.map((system) => [`${system}, ${noise}`, ...cells(meanOf(system, noise))]),
      ),
    ];

    const inputCleanSig = mean(clean.filter((c) => c.system === 'FINCH').map((c) => c.inputSig));
    for (const system of SYSTEMS.slice(1)) {
      const cases = clean.filter((c) => c.system === system);
      const scores = cases.map((c) => c.segSiSdr);
      rows.push([
        `clean recordings through ${system}`,
        '',
        `${mean(scores).toFixed(1)} dB (${Math.min(...scores).toFixed(1)}-${Math.max(...scores).toFixed(1)}) against itself`,
        '',
        '',
        `${mean(cases.map((c) => c.sig)).toFixed(2)} (input ${inputCleanSig.toFixed(2)})`,
        '',
        '',
      ]);
    }
    // Per clip: a recording with room sound or a background of its own loses some of it to a denoiser, which
    // counts as damage here; DNSMOS BAK beside SIG tells that apart from harm to the voice.
    for (const clipName of [...new Set(clean.map((c) => c.clip))]) {
      const of = (system: System) => clean.find((c) => c.clip === clipName && c.system === system)!;
      rows.push([
        `clean clip ${clipName}`,
        '',
        SYSTEMS.slice(1)
          .map((system) => `${system} ${of(system).segSiSdr.toFixed(1)} dB`)
          .join(', '),
        '',
        '',
        `input ${of('LARK_V2').inputSig.toFixed(2)}, LARK_V2 ${of('LARK_V2').sig.toFixed(2)}`,
        `input ${of('LARK_V2').inputBak.toFixed(2)}, LARK_V2 ${of('LARK_V2').bak.toFixed(2)}`,
        '',
      ]);
    }

    const lark = meanOf('LARK_V2');
    const finch = meanOf('FINCH');
    const larkClean = clean.filter((c) => c.system === 'LARK_V2');
    const larkCleanWorst = Math.min(...larkClean.map((c) => c.segSiSdr));
    const larkSigChange = mean(larkClean.map((c) => c.sig - c.inputSig));
    const goal = (text: string, pass: boolean) => [`**goal** ${text}`, pass ? 'PASS' : 'FAIL', '', '', '', '', '', ''];
    const goals = [
      goal(
        `LARK_V2 over FINCH, segmental SI-SDR: ${signed(lark.segSiSdr - finch.segSiSdr, 1)} dB (>= +${GOALS.segSiSdrDb})`,
        lark.segSiSdr - finch.segSiSdr >= GOALS.segSiSdrDb,
      ),
      goal(
        `LARK_V2 over FINCH, STOI: ${signed(lark.stoi - finch.stoi, 3)} (>= +${GOALS.stoi})`,
        lark.stoi - finch.stoi >= GOALS.stoi,
      ),
      goal(
        `LARK_V2 over FINCH, DNSMOS OVRL: ${signed(lark.ovrl - finch.ovrl, 2)} (>= +${GOALS.ovrl})`,
        lark.ovrl - finch.ovrl >= GOALS.ovrl,
      ),
      goal(
        `clean recordings through LARK_V2, segmental SI-SDR against themselves, lowest clip: ${larkCleanWorst.toFixed(1)} dB (>= ${GOALS.cleanSegSiSdrDb})`,
        larkCleanWorst >= GOALS.cleanSegSiSdrDb,
      ),
      goal(
        `clean recordings through LARK_V2, DNSMOS SIG against the input's: ${signed(larkSigChange, 2)} (within ±${GOALS.cleanSig})`,
        Math.abs(larkSigChange) <= GOALS.cleanSig,
      ),
    ];
    for (const row of goals) console.error(`  ${row[1]}: ${row[0].replace('**goal** ', '')}`);
    rows.push(...goals);

    const seconds = clips.map((c) => c.samples.length / RATE);
    return {
      title: 'Denoisers on real recordings: SI-SDR, segmental SI-SDR, STOI, ESTOI, DNSMOS P.835',
      table: rows,
      writtenAlone: true,
      notes: [
        `Run ${new Date().toISOString()}, ${((Date.now() - started) / 1000).toFixed(0)} s for this section, ${cpuSeconds(cpuAtStart).toFixed(0)} s of CPU on its two threads (load average ${load.toFixed(1)} at its start: the wall time grows with other work on the machine); \`npm run bench -- denoise-quality\` runs it alone and replaces only this section here.`,
        `Speech: ${clips.length} clean clips of ${Math.min(...seconds).toFixed(1)}-${Math.max(...seconds).toFixed(1)} s (${clips.map((c) => c.name).join(', ')}), from Debian's asterisk-core-sounds-en-g722 (CC BY-SA 3.0) and codec2-examples (LGPL-2.1), fetched with apt-get download and unpacked with dpkg -x into ${DEBIAN_CACHE} at run time; ffmpeg decodes them to 48 kHz.`,
        `Noises, each at ${SNRS.join(', ')} dB SNR against the speech's active level: recorded room noise (freesound.org 573577, CC0, in bench/media/, looped), babble of eight other recordings of both packages at one level, and the speech-quality section's synthetic noises: white and pink noise from a seed, 50 Hz hum with 9 harmonics, and a second voice (the clip itself a quarter higher, half its length later). ${noisy.length / SYSTEMS.length} noisy cases; each figure is their mean.`,
        "FINCH and LARK_V2: the engine's chain (enhanceWavFile) by model name at level 100, before the loudness stage; reference: the clean clip through the same chain with noise reduction off (the 80 Hz high-pass alone). ffmpeg afftdn: `afftdn=tn=1` behind the chain's own high-pass (two biquads at 80 Hz, a 4th-order Butterworth); reference: the clean clip through that high-pass. Input: the noisy mixture against the clean clip as recorded.",
        "Outputs are aligned to the reference (best lag within ±50 ms) and scaled by least squares. SI-SDR over the whole clip (LARK_V2's leveler moves its gain, which SI-SDR counts as distortion); segmental SI-SDR: the mean over 0.5 s windows where the reference is within 40 dB of its loudest window, each clamped to -10..60 dB (blind to a slow gain).",
        "STOI (Taal et al. 2011) and ESTOI (Jensen & Taal 2016) as published: 10 kHz, 256-sample Hann frames at 50% overlap, 15 one-third-octave bands from 150 Hz, 30-frame segments, frames 40 dB under the clean speech's loudest removed, STOI clipped at -15 dB SDR; our TypeScript matches pystoi to four decimals (test/bench/stoi.test.ts).",
        "DNSMOS P.835 (Microsoft, ICASSP 2022; model from github.com/microsoft/DNS-Challenge, CC BY 4.0 / MIT, in bench/models/dnsmos/) on each output alone, at 16 kHz, fed as its dnsmos_local.py does (a clip shorter than 9.01 s is repeated to fill the window), on onnxruntime-web's WebAssembly backend, on a thread of its own beside the rest of the run.",
        "Clean rows: each clean clip through the system, its segmental SI-SDR against its reference (the clip through the same high-pass), and its DNSMOS SIG beside the clean clip's own; per clip, LARK_V2's DNSMOS SIG and BAK beside the input's.",
      ],
    };
  } finally {
    await dnsmos.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The clips DENOISE_QUALITY_CLIPS names by number (all when it is not set). */
function chosenClips<T>(clips: T[]): T[] {
  const chosen = process.env.DENOISE_QUALITY_CLIPS;
  if (!chosen) return clips;
  return chosen.split(',').map((text) => {
    const clip = clips[Number(text)];
    if (!/^\d+$/.test(text.trim()) || !clip)
      throw new Error(`DENOISE_QUALITY_CLIPS: "${text}" is not a clip's number (0 to ${clips.length - 1})`);
    return clip;
  });
}

/** CPU time (user + system) the process has spent since `from`, all threads. */
const cpuSeconds = (from: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(from);
  return (user + system) / 1e6;
};
const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
const signed = (value: number, digits: number) => `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;

// Run alone: prints the table of the clips chosen, and writes nothing.
if (require.main === module)
  run().then(
    (report) => console.log(report.table.map((row) => `| ${row.join(' | ')} |`).join('\n')),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
