// De-reverberation (WPE) on real recorded speech in simulated rooms: the six clips of real-recordings.ts
// (about 30 s) convolved with image-source responses of one room at RT60 0.3, 0.6 and 1.0 s (measured
// back as T20), with and without recorded room noise at 10 dB SNR, and dry. Scored against the early
// target, the dry speech through the response's direct sound and first 50 ms (WPE leaves those by design,
// and so does a listener's ear): SI-SDR and STOI; DNSMOS OVRL on the output alone.
// Rows: the input, WPE alone, LARK_V2 (the default model) alone, and WPE then LARK_V2 through the chain.
// Then the cost: CPU time of one minute through WPE alone, and of the whole chain with it against without.
// `npm run bench -- dereverb-quality` runs this section alone.
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Dereverberator } from '../src/enhance/dereverberator';
import type { EnhanceOptions } from '../src/enhance/chain-types';
import { activeRms } from '../test/enhance/test-media';
import { DnsmosThread } from './dnsmos-thread';
import { RATE } from './quality-media';
import { siSdr } from './quality-metrics';
import { qualityRunners } from './quality-runners';
import { loop, realRecordings } from './real-recordings';
import { benchRoom, convolve, earlyPart, reverberationTime, roomImpulse } from './room-impulse';
import type { BenchReport } from './run';
import { stoi } from './stoi';

const RT60S = [0.3, 0.6, 1.0];
const NOISE_SNR_DB = 10;
const LARK_V2: EnhanceOptions = { model: 'LARK_V2', level: 100 };
const WITH_WPE: EnhanceOptions = { ...LARK_V2, dereverb: 1 };
const GOALS = { gainDb: 3, dryLossDb: 0.2, timeRatio: 1.5 };

/** `samples` through WPE at full strength, pushed as the chain pushes (32 768 samples at a time). */
export function dereverbSamples(stage: Dereverberator, samples: Float32Array): Float32Array {
  const out = new Float32Array(samples.length);
  let at = 0;
  for (let i = 0; i < samples.length; i += 32_768) {
    const frames = Math.min(32_768, samples.length - i);
    const part = stage.push(samples.subarray(i, i + frames), frames);
    out.set(part, at);
    at += part.length;
  }
  out.set(stage.flush(), at);
  return out;
}

const cpuSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
};

const cpuSeconds = async (work: () => Promise<unknown>) => {
  const start = process.cpuUsage();
  await work();
  return cpuSince(start);
};

export async function run(): Promise<BenchReport> {
  const load = loadavg()[0];
  const dir = await mkdtemp(join(tmpdir(), 'bench-dereverb-'));
  const { chain } = qualityRunners(dir);
  try {
    const recordings = await realRecordings(dir);
    const dry = concat(recordings.clips.map((clip) => clip.samples));
    const seconds = dry.length / RATE;

    // The cost first, while nothing else runs on this process's threads.
    const rooms = RT60S.map((rt60) => ({ rt60, impulse: roomImpulse(benchRoom(rt60), RATE) }));
    const minute = concat([convolve(dry, rooms[1].impulse.samples), convolve(dry, rooms[1].impulse.samples)]);
    const minutes = minute.length / RATE / 60;
    const stage = await Dereverberator.create(RATE, 1);
    const heldMb = stage.memoryBytes / 2 ** 20;
    const wpeStart = process.cpuUsage();
    dereverbSamples(stage, minute);
    const wpeSeconds = cpuSince(wpeStart) / minutes;
    const without = (await cpuSeconds(() => chain(minute, LARK_V2))) / minutes;
    const withWpe = (await cpuSeconds(() => chain(minute, WITH_WPE))) / minutes;
    const finchWithout = (await cpuSeconds(() => chain(minute, { model: 'FINCH', level: 100 }))) / minutes;
    const finchWith = (await cpuSeconds(() => chain(minute, { model: 'FINCH', level: 100, dereverb: 1 }))) / minutes;

    const dnsmos = new DnsmosThread();
    const table = [['condition', 'system', 'SI-SDR (dB)', 'STOI', 'DNSMOS OVRL']];
    const gains: Record<string, number> = {};
    try {
      const conditions = [
        ...rooms.flatMap(({ rt60, impulse }) => {
          const early = convolve(dry, earlyPart(impulse, RATE));
          const reverberant = convolve(dry, impulse.samples);
          const measured = reverberationTime(impulse.samples, RATE).toFixed(2);
          return [
            { key: `${rt60}`, name: `RT60 ${rt60} s (T20 ${measured} s)`, target: early, input: reverberant },
            {
              key: `${rt60} noisy`,
              name: `RT60 ${rt60} s + room noise ${NOISE_SNR_DB} dB`,
              target: early,
              input: noisy(reverberant, recordings.room),
            },
          ];
        }),
        { key: 'dry', name: 'dry', target: dry, input: dry },
        {
          key: 'dry noisy',
          name: `dry + room noise ${NOISE_SNR_DB} dB`,
          target: dry,
          input: noisy(dry, recordings.room),
        },
      ];
      for (const { key, name, target, input } of conditions) {
        const outputs: Array<[string, Float32Array]> = [
          ['input', input],
          ['WPE', dereverbSamples(await Dereverberator.create(RATE, 1), input)],
          ['LARK_V2', await chain(input, LARK_V2)],
          ['WPE + LARK_V2', await chain(input, WITH_WPE)],
        ];
        for (const [system, output] of outputs) {
          const score = siSdr(target, output);
          gains[`${key}|${system}`] = score;
          const scores = await dnsmos.score(output, RATE);
          const sdr = system === 'input' && name === 'dry' ? '∞' : score.toFixed(2);
          table.push([name, system, sdr, stoi(target, output, RATE).toFixed(3), scores.ovrl.toFixed(2)]);
        }
      }
    } finally {
      await dnsmos.close();
    }
    const gain = (condition: string, a: string, b: string) => gains[`${condition}|${a}`] - gains[`${condition}|${b}`];
    const at06 = gain('0.6', 'WPE', 'input');
    const dryLoss = gain('dry noisy', 'WPE + LARK_V2', 'LARK_V2');
    const ratio = withWpe / without;
    return {
      title: 'De-reverberation (WPE)',
      table,
      notes: [
        `${seconds.toFixed(1)} s of real speech (real-recordings.ts's six clips) at 48 kHz, in a 6 x 4.5 x 3 m room, talker 2.2 m from the microphone (image sources, Allen and Berkley 1979; walls fitted to the RT60 by its measured T20). Noise: the recorded room noise at ${NOISE_SNR_DB} dB under the reverberant speech's active level.`,
        'SI-SDR and STOI against the early target: the dry speech through the direct sound and first 50 ms of the response (the dry rows: against the dry speech).',
        `RT60 0.6 s, WPE alone: ${at06 >= 0 ? '+' : ''}${at06.toFixed(2)} dB SI-SDR against the reverberant input (goal: at least +${GOALS.gainDb} dB). Dry speech with noise, WPE + LARK_V2 against LARK_V2: ${dryLoss >= 0 ? '+' : ''}${dryLoss.toFixed(2)} dB (goal: within ${GOALS.dryLossDb} dB).`,
        `Cost, CPU seconds per minute of 48 kHz mono (one thread): WPE alone ${wpeSeconds.toFixed(2)} s; LARK_V2 ${without.toFixed(2)} s without, ${withWpe.toFixed(2)} s with (x${ratio.toFixed(2)}; goal at most x${GOALS.timeRatio}); FINCH ${finchWithout.toFixed(2)} s without, ${finchWith.toFixed(2)} s with (x${(finchWith / finchWithout).toFixed(2)}). Memory held: ${heldMb.toFixed(1)} MB per channel whatever the length (one 30 s block's spectrum).`,
        `Load average at the start: ${load.toFixed(1)}.`,
      ],
      writtenAlone: true,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** `speech` plus the room noise looped, at NOISE_SNR_DB under the speech's active level. */
function noisy(speech: Float32Array, room: Float32Array): Float32Array {
  const noise = loop(room, speech.length, 0);
  let sum = 0;
  for (const n of noise) sum += n * n;
  const gain = activeRms(speech) / Math.sqrt(sum / noise.length) / 10 ** (NOISE_SNR_DB / 20);
  return Float32Array.from(speech, (s, i) => s + gain * noise[i]);
}
