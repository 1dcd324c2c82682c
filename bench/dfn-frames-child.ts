// One contestant of dfn-frames.bench.ts, in a process of its own so its memory is its own: enhances a
// WAV (48 kHz mono, or 44.1 kHz stereo with one thread per channel) and prints its CPU time, its wall
// time and its peak resident memory above where it stood before.
//   node dfn-frames-child.js <mode> <input>
// modes: chain-FINCH | chain-LARK_V2 | chain-per-channel-LARK_V2 (a thread per channel, as before two
//        channels shared one session) | blockwise | stateful-wasm | stateful-native | stateful-wasm-batch |
//        stateful-native-batch
// A stereo file's second channel goes to a worker thread of this process, as the engine lends a file's
// channels to its other workers; CPU time and memory are the whole process's, both threads together. The
// `-batch` modes run every channel on this thread instead, their streams pushed together so that each
// run of the network carries all of them on its batch axis (one session, one runtime).
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { openWav } from '../src/audio/wav-reader';
import { enhanceWavFile } from '../src/enhance/chain';
import { runChannelTask, type ChannelTask } from '../src/enhance/channel-task';
import { DFN_RATE } from '../src/enhance/dfn-frames';
import { DfnStream } from '../src/enhance/dfn-stream';
import { StreamResampler } from '../src/enhance/resampler';
import { BlockwiseDfnStream } from './dfn-blockwise/blockwise-stream';

const kib = (field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))![1]);

type ThreadJob = { mode: string; input: string; channels: number[] } | { task: ChannelTask };

/**
 * The stream alone over some channels of the file (the network, its features and the STFT, after the same
 * resampler to 48 kHz for every contestant; no chain around it), the channels' streams pushed together.
 * Returns the runtime it ran on.
 */
async function streamOver(mode: string, input: string, channels: number[]): Promise<string> {
  const runtime = mode.startsWith('stateful-native') ? 'native' : 'wasm';
  const streams: Array<DfnStream | BlockwiseDfnStream> = [];
  const ups: Array<StreamResampler | undefined> = [];
  const source = await openWav(input);
  const rate = source.layout.sampleRate;
  try {
    for (let i = 0; i < channels.length; i++) {
      streams.push(
        mode === 'blockwise' ? await BlockwiseDfnStream.create() : await DfnStream.create(Infinity, { runtime }),
      );
      ups.push(rate === DFN_RATE ? undefined : await StreamResampler.create(rate, DFN_RATE));
    }
    for await (const block of source.blocks())
      await Promise.all(
        channels.map((channel, i) => {
          const samples = block.samples[channel];
          const at48 = ups[i] ? ups[i].push(samples, block.frames) : samples.subarray(0, block.frames);
          return streams[i].push(at48, at48.length);
        }),
      );
    await Promise.all(
      streams.map(async (stream, i) => {
        const tail = ups[i]?.flush();
        if (tail) await stream.push(tail, tail.length);
        await stream.flush();
      }),
    );
  } finally {
    await source.close();
    for (const stream of streams) stream.destroy();
    for (const up of ups) up?.destroy();
  }
  const first = streams[0];
  return first instanceof DfnStream ? first.runtime : 'wasm';
}

/** Runs `job` on a worker thread of this process. */
function onThread<T>(job: ThreadJob): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: job });
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => code !== 0 && reject(new Error(`thread exited ${code}`)));
  });
}

async function main(): Promise<void> {
  const [mode, input] = process.argv.slice(2);
  const source = await openWav(input);
  const channels = source.layout.channels;
  await source.close();
  const atStart = kib('VmRSS');
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  let runtime: string;
  if (mode.startsWith('chain-')) {
    const output = `${input}.${mode}.wav`;
    const report = await enhanceWavFile(
      input,
      output,
      { model: mode.slice(mode.lastIndexOf('-') + 1) as 'FINCH' | 'LARK_V2', level: 100 },
      {
        threads: channels,
        channelsPerThread: mode.startsWith('chain-per-channel-') ? 1 : undefined,
        runElsewhere: (task) => onThread({ task }),
      },
    );
    runtime = report.runtime;
    await rm(output, { force: true });
  } else if (mode.endsWith('-batch')) {
    runtime = await streamOver(
      mode,
      input,
      Array.from({ length: channels }, (_, c) => c),
    );
  } else {
    const others = Array.from({ length: channels - 1 }, (_, i) => onThread<string>({ mode, input, channels: [i + 1] }));
    runtime = await streamOver(mode, input, [0]);
    await Promise.all(others);
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

if (isMainThread)
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
else {
  const job = workerData as ThreadJob;
  const done = 'task' in job ? runChannelTask(job.task) : streamOver(job.mode, job.input, job.channels);
  done.then(
    (result) => parentPort!.postMessage(result),
    (error: unknown) => {
      throw error;
    },
  );
}
