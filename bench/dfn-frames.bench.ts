// DeepFilterNet3 frame by frame against the block-wise way it ran before (30 s blocks, each after 15 s of
// warm-up, on the graphs without state), on a 48 kHz mono file with one thread and a 44.1 kHz stereo file
// with two (one per channel), each run in a process of its own: CPU time and peak memory of the stream
// alone (block-wise WebAssembly, stateful WebAssembly, stateful native), and of the whole chain for
// LARK_V2 on each runtime beside FINCH. CPU time, not wall time: the machine is shared, and CPU time is
// what a worker costs.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { nativeRuntime } from '../src/enhance/onnx-runtimes';
import { speechLike, writeWavFile, type Signal } from '../test/fixtures/audio';
import type { BenchReport } from './run';

const exec = promisify(execFile);
const MINUTES = Number(process.env.DFN_BENCH_MINUTES ?? 2);

interface Result {
  mode: string;
  runtime: string;
  cpuSeconds: number;
  wallSeconds: number;
  peakMiB: number;
}

async function contestant(mode: string, input: string, env: NodeJS.ProcessEnv = {}): Promise<Result> {
  const { stdout } = await exec(process.execPath, [join(__dirname, 'dfn-frames-child.js'), mode, input], {
    env: { ...process.env, ...env },
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Result;
}

/** Two different speakers' worth of speech-like sound, one per channel (a file's twin channels run once). */
function twoSpeakers(rate: number): Signal {
  const [left, right] = [speechLike(rate, 1, 21, -26), speechLike(rate, 1, 22, -26)];
  return (frames) => [left(frames)[0], right(frames)[0]];
}

/** Every contestant on one file, each in a process of its own. */
async function contestants(input: string) {
  const native = nativeRuntime().available;
  return {
    blockwise: await contestant('blockwise', input),
    wasm: await contestant('stateful-wasm', input),
    nativeStream: native ? await contestant('stateful-native', input) : undefined,
    finch: await contestant('chain-FINCH', input),
    larkWasm: await contestant('chain-LARK_V2', input, { MEDIA_ENHANCE_ONNX_RUNTIME: 'wasm' }),
    larkNative: native ? await contestant('chain-LARK_V2', input) : undefined,
  };
}

export async function run(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-dfn-frames-'));
  try {
    const mono = join(dir, 'speech.wav');
    await writeWavFile(
      mono,
      { sampleRate: 48_000, channels: 1, bits: 16 },
      MINUTES * 60,
      speechLike(48_000, 1, 21, -26),
    );
    const stereo = join(dir, 'two-speakers.wav');
    await writeWavFile(stereo, { sampleRate: 44_100, channels: 2, bits: 16 }, MINUTES * 60, twoSpeakers(44_100));
    const audio = MINUTES * 60;
    const row = (name: string, result: Result | undefined, reference: Result, goal: string) =>
      result
        ? [
            name,
            `${(audio / result.cpuSeconds).toFixed(1)}x realtime per CPU second (${(audio / result.wallSeconds).toFixed(1)}x by the clock)`,
            `${(reference.cpuSeconds / result.cpuSeconds).toFixed(2)}`,
            `+${result.peakMiB.toFixed(0)} MiB`,
            goal,
          ]
        : [name, 'onnxruntime-node not installed', '-', '-', goal];
    const table = [['run', 'speed (CPU; by the clock)', 'ratio', 'peak memory', 'goal']];
    const shares: string[] = [];
    for (const [label, input] of [
      ['48 kHz mono, one thread', mono],
      ['44.1 kHz stereo, two threads', stereo],
    ] as const) {
      const { blockwise, wasm, nativeStream, finch, larkWasm, larkNative } = await contestants(input);
      table.push(
        row(`${label}: block-wise WebAssembly (before), the stream alone`, blockwise, blockwise, 'reference'),
        row(`${label}: stateful WebAssembly, the stream alone`, wasm, blockwise, '>= 1.4'),
        row(`${label}: stateful native, the stream alone`, nativeStream, blockwise, '>= 3'),
        row(`${label}: FINCH chain`, finch, finch, 'reference'),
        row(`${label}: LARK_V2 chain, WebAssembly`, larkWasm, finch, 'memory within 150 MB of FINCH'),
        row(`${label}: LARK_V2 chain, native`, larkNative, finch, 'memory within 150 MB of FINCH'),
      );
      shares.push(
        `${label}: ${((wasm.cpuSeconds / larkWasm.cpuSeconds) * 100).toFixed(0)}% on WebAssembly${nativeStream && larkNative ? `, ${((nativeStream.cpuSeconds / larkNative.cpuSeconds) * 100).toFixed(0)}% native` : ''}`,
      );
    }
    return {
      title: `DeepFilterNet3 frame by frame against block-wise, ${MINUTES} min of 48 kHz mono (one thread) and of 44.1 kHz stereo (two threads)`,
      table,
      writtenAlone: true,
      notes: [
        "Ratio: the reference's CPU time over the run's (higher is faster); the stream rows against block-wise, the chain rows against FINCH, on the same file.",
        "Peak memory: the highest resident memory of the run's own process above where it stood after loading its code (the network's sessions included; with two threads, both threads' together).",
        'The stream rows resample 44.1 kHz to 48 kHz before the stream, the same for every contestant.',
        `The network's share of the LARK_V2 chain (the stream alone over the chain, CPU time): ${shares.join('; ')}.`,
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
