// DeepFilterNet3 frame by frame against the block-wise way it ran before (30 s blocks, each after 15 s of
// warm-up, on the graphs without state), on a 48 kHz mono file with one thread and a 44.1 kHz stereo file
// with two (one per channel), each run in a process of its own: CPU time and peak memory of the stream
// alone (block-wise WebAssembly, stateful WebAssembly, stateful native), and of the whole chain for
// LARK_V2 on each runtime beside FINCH. CPU time, not wall time: the machine is shared, and CPU time is
// what a worker costs. The stereo file runs both channels on one thread, one session at batch 2 (as the
// engine does), against a thread per channel (as it did before): CPU time, wall time and peak memory side
// by side.
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

/** Every contestant on one file, each in a process of its own; `batch`: the one-thread batch-2 ones too. */
async function contestants(input: string, batch: boolean) {
  const native = nativeRuntime().available;
  return {
    wasmBatch: batch ? await contestant('stateful-wasm-batch', input) : undefined,
    nativeBatch: batch && native ? await contestant('stateful-native-batch', input) : undefined,
    larkWasmPerChannel: batch
      ? await contestant('chain-per-channel-LARK_V2', input, { MEDIA_ENHANCE_ONNX_RUNTIME: 'wasm' })
      : undefined,
    larkNativePerChannel: batch && native ? await contestant('chain-per-channel-LARK_V2', input) : undefined,
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
    const batches: string[] = [];
    /** `one` (one thread, batch 2) against `two` (a thread per channel): CPU time, wall time, peak memory. */
    const against = (name: string, one: Result | undefined, two: Result | undefined) =>
      one &&
      two &&
      batches.push(
        `${name}: CPU time ${(one.cpuSeconds / two.cpuSeconds).toFixed(2)}x (${one.cpuSeconds.toFixed(1)} s against ${two.cpuSeconds.toFixed(1)} s), wall time ${(one.wallSeconds / two.wallSeconds).toFixed(2)}x (${one.wallSeconds.toFixed(1)} s against ${two.wallSeconds.toFixed(1)} s), peak memory ${(one.peakMiB / two.peakMiB).toFixed(2)}x (+${one.peakMiB.toFixed(0)} MiB against +${two.peakMiB.toFixed(0)})`,
      );
    for (const [label, input, batch] of [
      ['48 kHz mono, one thread', mono, false],
      ['44.1 kHz stereo', stereo, true],
    ] as const) {
      const all = await contestants(input, batch);
      const { blockwise, wasm, nativeStream, finch, larkWasm, larkNative } = all;
      // Stereo: the streams on a thread per channel (as before) and on one thread at batch 2 (as the engine
      // runs them now); FINCH keeps a thread per channel.
      const perChannel = batch ? `${label}, a thread per channel` : label;
      const together = batch ? `${label}, one thread at batch 2` : label;
      table.push(
        row(`${perChannel}: block-wise WebAssembly (before), the stream alone`, blockwise, blockwise, 'reference'),
        row(`${perChannel}: stateful WebAssembly, the stream alone`, wasm, blockwise, '>= 1.4'),
        row(`${perChannel}: stateful native, the stream alone`, nativeStream, blockwise, '>= 3'),
      );
      if (batch)
        table.push(
          row(`${together}: stateful WebAssembly, the stream alone`, all.wasmBatch, blockwise, '>= 1.4'),
          row(`${together}: stateful native, the stream alone`, all.nativeBatch, blockwise, '>= 3'),
        );
      table.push(
        row(`${perChannel}: FINCH chain`, finch, finch, 'reference'),
        row(`${together}: LARK_V2 chain, WebAssembly`, larkWasm, finch, 'memory within 150 MB of FINCH'),
        row(`${together}: LARK_V2 chain, native`, larkNative, finch, 'memory within 150 MB of FINCH'),
      );
      if (batch) {
        table.push(
          row(`${perChannel} (before): LARK_V2 chain, WebAssembly`, all.larkWasmPerChannel, finch, '-'),
          row(`${perChannel} (before): LARK_V2 chain, native`, all.larkNativePerChannel, finch, '-'),
        );
        against('the stream alone, WebAssembly', all.wasmBatch, wasm);
        against('the stream alone, native', all.nativeBatch, nativeStream);
        against('the LARK_V2 chain, WebAssembly', larkWasm, all.larkWasmPerChannel);
        against('the LARK_V2 chain, native', larkNative, all.larkNativePerChannel);
      }
      const [streamWasm, streamNative] = batch ? [all.wasmBatch!, all.nativeBatch] : [wasm, nativeStream];
      shares.push(
        `${together}: ${((streamWasm.cpuSeconds / larkWasm.cpuSeconds) * 100).toFixed(0)}% on WebAssembly${streamNative && larkNative ? `, ${((streamNative.cpuSeconds / larkNative.cpuSeconds) * 100).toFixed(0)}% native` : ''}`,
      );
    }
    return {
      title: `DeepFilterNet3 frame by frame against block-wise, ${MINUTES} min of 48 kHz mono (one thread) and of 44.1 kHz stereo (one thread at batch 2, and a thread per channel)`,
      table,
      writtenAlone: true,
      notes: [
        "Ratio: the reference's CPU time over the run's (higher is faster); the stream rows against block-wise, the chain rows against FINCH, on the same file.",
        "Peak memory: the highest resident memory of the run's own process above where it stood after loading its code (the network's sessions included; with two threads, both threads' together).",
        'The stream rows resample 44.1 kHz to 48 kHz before the stream, the same for every contestant.',
        `The network's share of the LARK_V2 chain (the stream alone over the chain, CPU time): ${shares.join('; ')}.`,
        `44.1 kHz stereo, both channels on one thread (one session at batch 2) over a thread per channel (lower is better): ${batches.join('; ')}.`,
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
