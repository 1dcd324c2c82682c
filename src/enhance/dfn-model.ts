// DeepFilterNet3's network run frame by frame: the stateful form of its three graphs (encoder, ERB
// decoder, deep-filter decoder, joined in one graph: models/deepfilternet3/dfn3_stateful.onnx, derived
// from the shipped graphs by scripts/dfn-stateful-graphs.ts) takes a chunk of new frames and the state
// the previous chunk left (each GRU's hidden state and the frames each looking-back convolution still
// needs), and gives the chunk's outputs and the next state. A run in chunks of any size equals one run
// over the whole sequence.
//
// The session is made once per thread and runtime, on first use, shared by every signal of the thread
// (each DfnNetwork holds its own state), warmed once by the first live stream that asks (warmSessionOnce,
// src/stream/lark-denoiser.ts), and released when the thread's work ends (releaseDfnModel).
// On the native runtime a network writes its outputs and next state into buffers of its own, made once
// per chunk size: a run leaves no garbage behind (onnxruntime-web copies outputs out of its WebAssembly
// memory whatever it is given, so there each run's outputs are new arrays).
//
// The runs the thread's signals ask for while a run is in flight are made together, as one batch per
// frame count (the graph's batch axis is free): at one or two frames a run's cost is mostly reading the
// GRUs' weights, which a batch reads once for all (live streams sharing a thread: 8 streams' 20 ms chunks
// cost about a third of 8 runs). Each signal gets exactly what it gets alone.
import { join } from 'node:path';
import type { InferenceSession, Tensor } from 'onnxruntime-web';
import { DF_BINS, ERB_BANDS } from './dfn-features';
import { loadOnnxRuntime, nativeRuntime, type OnnxRuntimeKind } from './onnx-runtimes';

/** The joined stateful graph (scripts/dfn-stateful-graphs.ts: STATEFUL_FILE). */
const STATEFUL_FILE = 'dfn3_stateful.onnx';

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
  network: InferenceSession;
  TensorOf: typeof Tensor;
  /** Each input's and output's batch axis, by name. */
  batchAxes: Map<string, number>;
  /** The warm-up run on this session, once (DfnNetwork.warmSessionOnce). */
  warmUp?: Promise<void>;
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
      const network = await runtime.open(join(MODEL_DIR, STATEFUL_FILE));
      return { runtime: runtime.kind, network, TensorOf: runtime.Tensor, batchAxes: batchAxes(network) };
    })();
    sessions.set(kind, loading);
    loading.catch(() => sessions.delete(kind));
  }
  return loading;
}

/** The runs this thread has made, the most signals one has carried, and how many carried more than one (for the tests). */
let runs = 0;
let largestBatch = 0;
let batchedRuns = 0;

/**
 * Whether this thread holds sessions now, how often it made them, how many runs it made, its largest batch
 * and how many of its runs carried more than one signal (for the tests).
 */
export function dfnModelState(): {
  loaded: boolean;
  loads: number;
  runs: number;
  largestBatch: number;
  batchedRuns: number;
} {
  return { loaded: sessions.size > 0, loads, runs, largestBatch, batchedRuns };
}

/** The graph's free batch axis (scripts/dfn-stateful-graphs.ts): signals run together along it. */
const BATCH = 'B';

/** The state inputs of a session (named `<state>.in`), each to be fed from its `<state>.out`; one signal's dims. */
function stateInputs(session: InferenceSession): { name: string; dims: number[] }[] {
  return session.inputMetadata
    .filter((input) => input.name.endsWith('.in'))
    .map((input) => {
      if (!input.isTensor) throw new Error(`${input.name}: not a tensor`);
      return { name: input.name, dims: input.shape.map((dim) => (dim === BATCH ? 1 : Number(dim))) };
    });
}

/** Where each input's and output's batch axis is, by the session's metadata. */
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
          runs++;
          if (group.length === 1) group[0].resolve(await group[0].network.runAlone(group[0]));
          else await runBatch(group);
        } catch (error) {
          for (const request of group) request.reject(error);
        }
      }
    });
}

/**
 * One run over a batch of signals (one session, the same frame count each): their features and states
 * side by side on the batch axis; each signal then takes its share of the outputs and next state.
 */
async function runBatch(batch: Request[]): Promise<void> {
  const { sessions } = batch[0].network;
  const { frames } = batch[0];
  largestBatch = Math.max(largestBatch, batch.length);
  batchedRuns++;
  /** The signals' arrays of one input side by side: all axes before the batch axis are 1. */
  const together = (name: string, parts: Float32Array[], dims: readonly number[]) => {
    const axis = sessions.batchAxes.get(name)!;
    const data = new Float32Array(parts[0].length * batch.length);
    parts.forEach((part, b) => data.set(part, b * parts[0].length));
    return new sessions.TensorOf(
      'float32',
      data,
      dims.map((dim, i) => (i === axis ? dim * batch.length : dim)),
    );
  };
  const feeds: Record<string, Tensor> = {
    feat_erb: together(
      'feat_erb',
      batch.map(({ erb }) => erb.subarray(0, frames * ERB_BANDS)),
      [1, 1, frames, ERB_BANDS],
    ),
    feat_spec: together(
      'feat_spec',
      batch.map(({ spec }) => spec.subarray(0, 2 * frames * DF_BINS)),
      [1, 2, frames, DF_BINS],
    ),
  };
  for (const [name, first] of batch[0].network.stateTensors())
    feeds[name] = together(
      name,
      batch.map(({ network }) => network.stateTensors().get(name)!.data as Float32Array),
      first.dims,
    );
  const results = await sessions.network.run(feeds);
  batch.forEach((request, b) => request.resolve(request.network.takeShare(results, b, batch.length)));
}

/** Buffers a native run writes into: the outputs for one chunk size. */
interface OutputBuffers {
  frames: number;
  fetches: Record<string, Tensor>;
  outputs: DfnOutputs;
}

/** The network over one signal: feed it the signal's frames in order, in chunks of any size. */
export class DfnNetwork {
  /** The state the next run takes, by input name (zeros before the first run). */
  private state = new Map<string, Tensor>();
  /** Native only: the state buffers the next run writes into (the ones the run before read), by input name. */
  private spareState?: Map<string, Tensor>;
  private outputBuffers?: OutputBuffers;

  private constructor(readonly sessions: Sessions) {
    const { network, runtime } = sessions;
    const zeros = () =>
      new Map(stateInputs(network).map(({ name, dims }) => [name, this.tensor(new Float32Array(size(dims)), dims)]));
    this.state = zeros();
    if (runtime === 'native') this.spareState = zeros();
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
   * Runs `warmUp` the first time a network of this session asks; later callers wait for that one. What a
   * session's first runs cost (see LarkDenoiser) is then paid once per thread and runtime, not per signal;
   * a session made again after a release is warmed again. A warm-up that fails is tried again by the next.
   */
  warmSessionOnce(warmUp: () => Promise<void>): Promise<void> {
    const { sessions } = this;
    if (!sessions.warmUp) {
      const warming = warmUp();
      sessions.warmUp = warming;
      warming.catch(() => {
        if (sessions.warmUp === warming) sessions.warmUp = undefined;
      });
    }
    return sessions.warmUp;
  }

  /**
   * Runs the network on the next `frames` frames: `erb` holds frames x ERB_BANDS features, `spec` the
   * complex features as 2 planes (re, then im) of frames x DF_BINS (read when the run starts: leave them
   * as they are until it resolves). The outputs are valid until the network's next run.
   */
  run(erb: Float32Array, spec: Float32Array, frames: number): Promise<DfnOutputs> {
    return new Promise((resolve, reject) => {
      pending.push({ network: this, erb, spec, frames, resolve, reject });
      queueTurn();
    });
  }

  /** Bytes of this signal's state (and, native, of its spare state and output buffers). */
  stateBytes(): number {
    let bytes = 0;
    for (const states of [this.state, this.spareState ?? new Map<string, Tensor>()])
      for (const tensor of states.values()) bytes += (tensor.data as Float32Array).byteLength;
    const outputs = this.outputBuffers?.outputs;
    return bytes + (outputs ? outputs.mask.byteLength + outputs.coefs.byteLength + outputs.lsnr.byteLength : 0);
  }

  /** The state the next run takes, by input name (for a batch's run). */
  stateTensors(): ReadonlyMap<string, Tensor> {
    return this.state;
  }

  /** A run of this signal alone (a batch of one). */
  async runAlone({ erb, spec, frames }: Request): Promise<DfnOutputs> {
    const feeds: Record<string, Tensor> = {
      feat_erb: this.tensor(erb.subarray(0, frames * ERB_BANDS), [1, 1, frames, ERB_BANDS]),
      feat_spec: this.tensor(spec.subarray(0, 2 * frames * DF_BINS), [1, 2, frames, DF_BINS]),
    };
    for (const [name, value] of this.state) feeds[name] = value;
    if (!this.spareState) {
      const results = await this.sessions.network.run(feeds);
      for (const name of this.state.keys()) this.state.set(name, results[outName(name)]);
      return outputsOf(frames, results);
    }
    // Native: into this network's own buffers, the state into the spare set, which then becomes the state.
    const buffers = this.outputBuffersFor(frames);
    const fetches = { ...buffers.fetches };
    for (const [name, value] of this.spareState) fetches[outName(name)] = value;
    await this.sessions.network.run(feeds, fetches);
    [this.state, this.spareState] = [this.spareState, this.state];
    return buffers.outputs;
  }

  /** Signal b's share of a batch's results (of `count` signals): its outputs, and its next state kept. */
  takeShare(results: InferenceSession.OnnxValueMapType, b: number, count: number): DfnOutputs {
    /** Signal b's slice of the batch axis: contiguous, as all axes before it are 1. */
    const share = (name: string) => {
      const data = results[name].data as Float32Array;
      const length = data.length / count;
      return data.subarray(b * length, (b + 1) * length);
    };
    const frames = results.m.dims[2];
    if (!this.spareState) {
      for (const [name, value] of this.state) this.state.set(name, this.tensor(share(outName(name)), [...value.dims]));
      return { frames, mask: share('m'), coefs: share('coefs'), lsnr: share('lsnr') };
    }
    // Native: copied into this network's own buffers, as a run alone writes them.
    for (const [name, spare] of this.spareState) (spare.data as Float32Array).set(share(outName(name)));
    [this.state, this.spareState] = [this.spareState, this.state];
    const { outputs } = this.outputBuffersFor(frames);
    outputs.mask.set(share('m'));
    outputs.coefs.set(share('coefs'));
    outputs.lsnr.set(share('lsnr'));
    return outputs;
  }

  private tensor(data: Float32Array, dims: number[]): Tensor {
    return new this.sessions.TensorOf('float32', data, dims);
  }

  /** The output buffers for chunks of `frames` (made again only when the chunk size changes: at a stream's end). */
  private outputBuffersFor(frames: number): OutputBuffers {
    if (this.outputBuffers?.frames === frames) return this.outputBuffers;
    const outputs: DfnOutputs = {
      frames,
      mask: new Float32Array(frames * ERB_BANDS),
      coefs: new Float32Array(frames * DF_BINS * DF_ORDER * 2),
      lsnr: new Float32Array(frames),
    };
    const fetches = {
      m: this.tensor(outputs.mask, [1, 1, frames, ERB_BANDS]),
      coefs: this.tensor(outputs.coefs, [1, frames, DF_BINS, DF_ORDER * 2]),
      lsnr: this.tensor(outputs.lsnr, [1, frames, 1]),
    };
    return (this.outputBuffers = { frames, fetches, outputs });
  }
}

const size = (dims: number[]) => dims.reduce((a, b) => a * b, 1);
/** A state input's output: `<state>.in` is fed from `<state>.out`. */
const outName = (inName: string) => `${inName.slice(0, -'.in'.length)}.out`;

function outputsOf(frames: number, results: InferenceSession.OnnxValueMapType): DfnOutputs {
  return {
    frames,
    mask: results.m.data as Float32Array,
    coefs: results.coefs.data as Float32Array,
    lsnr: results.lsnr.data as Float32Array,
  };
}

/** Frees the sessions of this thread (the next run loads them again). */
export async function releaseDfnModel(): Promise<void> {
  const loading = [...sessions.values()];
  sessions.clear();
  await queue;
  for (const loaded of await Promise.all(loading.map((l) => l.catch(() => undefined))))
    if (loaded) await loaded.network.release();
}

/** No network run starts in this thread from now on; resolves once the one in flight has returned and the sessions are freed. */
export async function endDfnRuns(): Promise<void> {
  ending = true;
  await releaseDfnModel();
}
