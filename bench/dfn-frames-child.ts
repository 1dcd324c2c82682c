// One contestant of dfn-frames.bench.ts, in a process of its own so its memory is its own: enhances a
// 48 kHz mono WAV and prints its CPU time and its peak resident memory above where it stood before.
//   node dfn-frames-child.js <chain-FINCH | chain-LARK_V2 | blockwise | stateful-wasm | stateful-native> <input>
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { openWav } from '../src/audio/wav-reader';
import { enhanceWavFile } from '../src/enhance/chain';
import { DfnStream } from '../src/enhance/dfn-stream';
import { BlockwiseDfnStream } from './dfn-blockwise/blockwise-stream';

const kib = (field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))![1]);

/** The stream alone over the file's samples (the network, its features and the STFT; no chain around it). */
async function streamOver(
  input: string,
  stream: { push(s: Float32Array, n: number): Promise<unknown>; flush(): Promise<unknown> },
) {
  const source = await openWav(input);
  try {
    for await (const block of source.blocks()) await stream.push(block.samples[0], block.frames);
    await stream.flush();
  } finally {
    await source.close();
  }
}

async function main(): Promise<void> {
  const [mode, input] = process.argv.slice(2);
  const atStart = kib('VmRSS');
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  let runtime: string;
  if (mode.startsWith('chain-')) {
    const output = `${input}.${mode}.wav`;
    const report = await enhanceWavFile(input, output, { model: mode.slice(6) as 'FINCH' | 'LARK_V2', level: 100 });
    runtime = report.runtime;
    await rm(output, { force: true });
  } else if (mode === 'blockwise') {
    const stream = await BlockwiseDfnStream.create();
    await streamOver(input, stream);
    stream.destroy();
    runtime = 'wasm';
  } else {
    const stream = await DfnStream.create(Infinity, { runtime: mode === 'stateful-native' ? 'native' : 'wasm' });
    runtime = stream.runtime;
    await streamOver(input, stream);
    stream.destroy();
  }
  const used = process.cpuUsage(cpu);
  console.log(
    JSON.stringify({
      mode,
      runtime,
      cpuSeconds: (used.user + used.system) / 1e6,
      wallSeconds: Number(process.hrtime.bigint() - started) / 1e9,
      peakMiB: (kib('VmHWM') - atStart) / 1024,
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
