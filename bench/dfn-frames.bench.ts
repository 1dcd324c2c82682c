// DeepFilterNet3 frame by frame against the block-wise way it ran before (30 s blocks, each after 15 s of
// warm-up, on the graphs without state), on one 48 kHz mono file, one thread, each run in a process of
// its own: CPU time and peak memory of the stream alone (block-wise WebAssembly, stateful WebAssembly,
// stateful native), and of the whole chain for LARK_V2 on each runtime beside FINCH. CPU time, not wall
// time: the machine is shared, and CPU time is what a worker costs.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { nativeRuntime } from '../src/enhance/onnx-runtimes';
import { speechLike, writeWavFile } from '../test/fixtures/audio';
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

export async function run(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-dfn-frames-'));
  try {
    const input = join(dir, 'speech.wav');
    await writeWavFile(
      input,
      { sampleRate: 48_000, channels: 1, bits: 16 },
      MINUTES * 60,
      speechLike(48_000, 1, 21, -26),
    );
    const native = nativeRuntime().available;
    const blockwise = await contestant('blockwise', input);
    const wasm = await contestant('stateful-wasm', input);
    const nativeStream = native ? await contestant('stateful-native', input) : undefined;
    const finch = await contestant('chain-FINCH', input);
    const larkWasm = await contestant('chain-LARK_V2', input, { MEDIA_ENHANCE_ONNX_RUNTIME: 'wasm' });
    const larkNative = native ? await contestant('chain-LARK_V2', input) : undefined;
    const audio = MINUTES * 60;
    const row = (name: string, result: Result | undefined, reference: Result, goal: string) =>
      result
        ? [
            name,
            `${(audio / result.cpuSeconds).toFixed(1)}x realtime per CPU second`,
            `${(reference.cpuSeconds / result.cpuSeconds).toFixed(2)}`,
            `+${result.peakMiB.toFixed(0)} MiB`,
            goal,
          ]
        : [name, 'onnxruntime-node not installed', '-', '-', goal];
    return {
      title: `DeepFilterNet3 frame by frame against block-wise, ${MINUTES} min of 48 kHz mono, one thread`,
      table: [
        ['run', 'speed (CPU)', 'ratio', 'peak memory', 'goal'],
        row('block-wise WebAssembly (before), the stream alone', blockwise, blockwise, 'reference'),
        row('stateful WebAssembly, the stream alone', wasm, blockwise, '>= 1.4'),
        row('stateful native, the stream alone', nativeStream, blockwise, '>= 3'),
        row('FINCH chain', finch, finch, 'reference'),
        row('LARK_V2 chain, WebAssembly', larkWasm, finch, 'memory within 150 MB of FINCH'),
        row('LARK_V2 chain, native', larkNative, finch, 'memory within 150 MB of FINCH'),
      ],
      writtenAlone: true,
      notes: [
        "Ratio: the reference's CPU time over the run's (higher is faster); the stream rows against block-wise, the chain rows against FINCH.",
        "Peak memory: the highest resident memory of the run's own process above where it stood after loading its code (the network's sessions included).",
        `The network's share of the LARK_V2 chain: ${((wasm.cpuSeconds / larkWasm.cpuSeconds) * 100).toFixed(0)}% on WebAssembly${nativeStream && larkNative ? `, ${((nativeStream.cpuSeconds / larkNative.cpuSeconds) * 100).toFixed(0)}% native` : ''} (the stream alone over the chain, CPU time).`,
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
