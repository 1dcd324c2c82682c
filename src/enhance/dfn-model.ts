// DeepFilterNet3's network run frame by frame: the stateful forms of its three graphs (encoder, ERB
// decoder, deep-filter decoder; models/deepfilternet3/*_stateful.onnx, derived from the shipped graphs by
// scripts/dfn-stateful-graphs.ts) take a chunk of new frames and the state the previous chunk left (each
// GRU's hidden state and the frames each looking-back convolution still needs), and give the chunk's
// outputs and the next state. A run in chunks of any size equals one run over the whole sequence.
//
// The sessions are made once per thread and runtime, on first use, shared by every signal of the thread
// (each DfnNetwork holds its own state), and released when the thread's work ends (releaseDfnModel).
//
// The runs the thread's signals ask for while a run is in flight are made together, as one batch per
// frame count (the graphs' batch axis is free): at one or two frames a run's cost is mostly reading the
// GRUs' weights, which a batch reads once for all (live streams sharing a thread: 8 streams' 20 ms chunks
// cost about a quarter of 8 runs). Each signal gets exactly what it gets alone.
import { join } from 'node:path';
import type { InferenceSession, Tensor } from 'onnxruntime-web';
import { DF_BINS, ERB_BANDS } from './dfn-features';
import { loadOnnxRuntime, nativeRuntime, type OnnxRuntimeKind } from './onnx-runtimes';

export const MODEL_DIR = join(__dirname, '..', '..', '..', 'models', 'deepfilternet3');
/** Deep-filter taps per bin, each a complex coefficient. */
export const DF_ORDER = 5;
/** The mask and coefficients the graphs give for input frame t belong to spectrum t - CONV_LOOKAHEAD. */
export const CONV_LOOKAHEAD = 2;

/** What the network makes of `frames` frames of features. */
export interface DfnOutputs {
  frames: number;
  /** ERB gains 0..1: frames x ERB_BANDS. */
  mask: Float32Array;
  /** Deep-filter coefficients: frames x DF_BINS x DF_ORDER x (re, im). */
  coefs: Float32Array;
  /** The network's estimate of the local signal-to-noise ratio (dB, -15..35), one per frame. */
  lsnr: Float32Array;
}

interface Sessions {
  runtime: OnnxRuntimeKind;
  encoder: InferenceSession;
  erbDecoder: InferenceSession;
  dfDecoder: InferenceSession;
  TensorOf: typeof Tensor;
  /** Each input's and output's batch axis, by name (the three graphs' names are one namespace). */
  batchAxes: Map<string, number>;
}

const sessions = new Map<OnnxRuntimeKind, Promise<Sessions>>();
/** How many times this thread has made sessions (once per runtime, unless released). */
let loads = 0;
/** Runs one at a time: a session is not to be run twice at once. */
let queue: Promise<unknown> = Promise.resolve();
/** Set when this thread is ending (thread-end.ts): no run starts after it. */
let ending = false;

function loadSessions(asked: OnnxRuntimeKind | 'auto'): Promise<Sessions> {
  const kind = asked === 'auto' ? (nativeRuntime().available ? 'native' : 'wasm') : asked;
  let loading = sessions.get(kind);
  if (!loading) {
    loading = (async () => {
      loads++;
      const runtime = await loadOnnxRuntime(kind);
      const open = (name: string) => runtime.open(join(MODEL_DIR, `${name}_stateful.onnx`));
      const [encoder, erbDecoder, dfDecoder] = [await open('enc'), await open('erb_dec'), await open('df_dec')];
      return {
        runtime: runtime.kind,
        encoder,
        erbDecoder,
        dfDecoder,
        TensorOf: runtime.Tensor,
        batchAxes: new Map([encoder, erbDecoder, dfDecoder].flatMap((session) => [...batchAxes(session)])),
      };
    })();
    sessions.set(kind, loading);
    loading.catch(() => sessions.delete(kind));
  }
  return loading;
}

/** The most signals one run of this thread has carried (for the tests of batching). */
let largestBatch = 0;

/** Whether this thread holds sessions now, how often it made them, and its largest batch (for the tests). */
export function dfnModelState(): { loaded: boolean; loads: number; largestBatch: number } {
  return { loaded: sessions.size > 0, loads, largestBatch };
}

/** The state inputs of a session (named `<state>.in`), each to be fed from its `<state>.out`; one signal's dims. */
function stateInputs(session: InferenceSession): { name: string; dims: number[] }[] {
  return session.inputMetadata
    .filter((input) => input.name.endsWith('.in'))
    .map((input) => {
      if (!input.isTensor) throw new Error(`${input.name}: not a tensor`);
      return { name: input.name, dims: input.shape.map((dim) => (dim === BATCH ? 1 : Number(dim))) };
    });
}

/** The graphs' free batch axis (scripts/dfn-stateful-graphs.ts): signals run together along it. */
const BATCH = 'B';

/** Where a tensor's batch axis is, by the session's metadata of its input or output. */
function batchAxes(session: InferenceSession): Map<string, number> {
  const axes = new Map<string, number>();
  for (const value of [...session.inputMetadata, ...session.outputMetadata])
    if (value.isTensor) axes.set(value.name, value.shape.indexOf(BATCH));
  return axes;
}

/** One signal's run, waiting to be made with the others asked for meanwhile. */
interface Request {
  network: DfnNetwork;
  erb: Float32Array;
  spec: Float32Array;
  frames: number;
  resolve(outputs: DfnOutputs): void;
  reject(error: unknown): void;
}

/** Runs asked for and not started yet, and whether a turn to start them is already queued. */
let pending: Request[] = [];
let turnQueued = false;

/** Starts, after the runs in flight, one batch per runtime and frame count of the runs asked for by then. */
function queueTurn(): void {
  if (turnQueued) return;
  turnQueued = true;
  // setImmediate: the runs other signals ask for in the same turn of the event loop join the batch.
  queue = queue
    .then(() => new Promise((resolve) => setImmediate(resolve)))
    .then(async () => {
      turnQueued = false;
      const taken = pending;
      pending = [];
      const groups = new Map<string, Request[]>();
      // A network's second run waits for its first (it needs the state the first leaves): the next turn.
      const later: Request[] = [];
      const running = new Set<DfnNetwork>();
      for (const request of taken) {
        if (running.has(request.network)) {
          later.push(request);
          continue;
        }
        running.add(request.network);
        const key = `${request.network.runtime} ${request.frames}`;
        groups.set(key, [...(groups.get(key) ?? []), request]);
      }
      if (later.length > 0) {
        pending = [...later, ...pending];
        queueTurn();
      }
      for (const group of groups.values()) {
        try {
          if (ending) throw new Error('the thread is ending');
          const outputs = await runBatch(group);
          group.forEach((request, b) => request.resolve(outputs[b]));
        } catch (error) {
          for (const request of group) request.reject(error);
        }
      }
    });
}

/** The network over one signal: feed it the signal's frames in order, in chunks of any size. */
export class DfnNetwork {
  /** The state each graph's next run takes, by input name (zeros before the first run), one signal's. */
  readonly state = new Map<string, Tensor>();

  private constructor(readonly sessions: Sessions) {
    const { encoder, erbDecoder, dfDecoder, TensorOf } = sessions;
    for (const session of [encoder, erbDecoder, dfDecoder])
      for (const { name, dims } of stateInputs(session))
        this.state.set(name, new TensorOf('float32', new Float32Array(dims.reduce((a, b) => a * b, 1)), dims));
  }

  /** `runtime`: 'auto' takes the native runtime where it is installed, else WebAssembly. */
  static async create(runtime: OnnxRuntimeKind | 'auto' = 'auto'): Promise<DfnNetwork> {
    try {
      return new DfnNetwork(await loadSessions(runtime));
    } catch (error) {
      // A native runtime that loads but cannot make the sessions (a broken install): WebAssembly, as without it.
      if (runtime !== 'auto' || !nativeRuntime().available) throw error;
      return new DfnNetwork(await loadSessions('wasm'));
    }
  }

  /** The runtime that runs this network. */
  get runtime(): OnnxRuntimeKind {
    return this.sessions.runtime;
  }

  /**
   * Runs the network on the next `frames` frames: `erb` holds frames x ERB_BANDS features, `spec` the
   * complex features as 2 planes (re, then im) of frames x DF_BINS. Both are read when the run starts:
   * leave them as they are until it resolves.
   */
  run(erb: Float32Array, spec: Float32Array, frames: number): Promise<DfnOutputs> {
    return new Promise((resolve, reject) => {
      pending.push({ network: this, erb, spec, frames, resolve, reject });
      queueTurn();
    });
  }
}

/**
 * One run of the three graphs over a batch of signals (one network, the same frame count each): their
 * features and states laid side by side on the batch axis, the outputs and next states split back.
 */
async function runBatch(batch: Request[]): Promise<DfnOutputs[]> {
  const { sessions } = batch[0].network;
  const { encoder, erbDecoder, dfDecoder, TensorOf } = sessions;
  const axis = (name: string) => sessions.batchAxes.get(name)!;
  const frames = batch[0].frames;
  const count = batch.length;
  largestBatch = Math.max(largestBatch, count);
  /** One signal's tensors of a name, side by side on the batch axis (all axes before it are 1). */
  const together = (parts: Float32Array[], dims: number[], axis: number) => {
    if (count === 1) return new TensorOf('float32', parts[0], dims);
    const size = parts[0].length;
    const data = new Float32Array(size * count);
    parts.forEach((part, b) => data.set(part, b * size));
    return new TensorOf(
      'float32',
      data,
      dims.map((dim, i) => (i === axis ? dim * count : dim)),
    );
  };
  const statesOf = (session: InferenceSession): Record<string, Tensor> => {
    const feeds: Record<string, Tensor> = {};
    for (const name of session.inputNames)
      if (name.endsWith('.in')) {
        const first = batch[0].network.state.get(name)!;
        const parts = batch.map((request) => request.network.state.get(name)!.data as Float32Array);
        feeds[name] = together(parts, [...first.dims], axis(name));
      }
    return feeds;
  };
  /** Signal b's share of an output: its slice of the batch axis (contiguous: all axes before it are 1). */
  const share = (tensor: Tensor, b: number, axis: number): Tensor => {
    if (count === 1) return tensor;
    const data = tensor.data as Float32Array;
    const size = data.length / count;
    return new TensorOf(
      'float32',
      data.subarray(b * size, (b + 1) * size),
      tensor.dims.map((dim, i) => (i === axis ? dim / count : dim)),
    );
  };

  const encoded = await encoder.run({
    feat_erb: together(
      batch.map((request) => request.erb.subarray(0, frames * ERB_BANDS)),
      [1, 1, frames, ERB_BANDS],
      0,
    ),
    feat_spec: together(
      batch.map((request) => request.spec.subarray(0, 2 * frames * DF_BINS)),
      [1, 2, frames, DF_BINS],
      0,
    ),
    ...statesOf(encoder),
  });
  const { e0, e1, e2, e3, emb, c0, lsnr } = encoded;
  const erbDecoded = await erbDecoder.run({ emb, e3, e2, e1, e0, ...statesOf(erbDecoder) });
  const dfDecoded = await dfDecoder.run({ emb, c0, ...statesOf(dfDecoder) });
  const results: DfnOutputs[] = [];
  for (let b = 0; b < count; b++) {
    const { network } = batch[b];
    for (const outputs of [encoded, erbDecoded, dfDecoded])
      for (const [name, value] of Object.entries(outputs))
        if (name.endsWith('.out'))
          network.state.set(`${name.slice(0, -'.out'.length)}.in`, share(value, b, axis(name)));
    results.push({
      frames,
      mask: share(erbDecoded.m, b, 0).data as Float32Array,
      coefs: share(dfDecoded.coefs, b, 0).data as Float32Array,
      lsnr: share(lsnr, b, 0).data as Float32Array,
    });
  }
  return results;
}

/** Frees the sessions of this thread (the next run loads them again). */
export async function releaseDfnModel(): Promise<void> {
  const loading = [...sessions.values()];
  sessions.clear();
  await queue;
  for (const loaded of await Promise.all(loading.map((l) => l.catch(() => undefined))))
    if (loaded) await Promise.all([loaded.encoder.release(), loaded.erbDecoder.release(), loaded.dfDecoder.release()]);
}

/** No network run starts in this thread from now on; resolves once the one in flight has returned and the sessions are freed. */
export async function endDfnRuns(): Promise<void> {
  ending = true;
  await releaseDfnModel();
}
