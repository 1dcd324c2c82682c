// DeepFilterNet3's network run frame by frame: the stateful form of its three graphs (encoder, ERB
// decoder, deep-filter decoder, joined in one graph: models/deepfilternet3/dfn3_stateful.onnx, derived
// from the shipped graphs by scripts/dfn-stateful-graphs.ts) takes a chunk of new frames and the state
// the previous chunk left (each GRU's hidden state and the frames each looking-back convolution still
// needs), and gives the chunk's outputs and the next state. A run in chunks of any size equals one run
// over the whole sequence.
//
// The session is made once per thread and runtime, on first use, shared by every signal of the thread
// (each DfnNetwork holds its own state), and released when the thread's work ends (releaseDfnModel).
// On the native runtime a network writes its outputs and next state into buffers of its own, made once
// per chunk size: a run leaves no garbage behind (onnxruntime-web copies outputs out of its WebAssembly
// memory whatever it is given, so there each run's outputs are new arrays).
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
      return {
        runtime: runtime.kind,
        network: await runtime.open(join(MODEL_DIR, STATEFUL_FILE)),
        TensorOf: runtime.Tensor,
      };
    })();
    sessions.set(kind, loading);
    loading.catch(() => sessions.delete(kind));
  }
  return loading;
}

/** Whether this thread holds sessions now, and how often it made them (for the tests of reuse and release). */
export function dfnModelState(): { loaded: boolean; loads: number } {
  return { loaded: sessions.size > 0, loads };
}

/** The state inputs of a session (named `<state>.in`), each to be fed from its `<state>.out`. */
function stateInputs(session: InferenceSession): { name: string; dims: number[] }[] {
  return session.inputMetadata
    .filter((input) => input.name.endsWith('.in'))
    .map((input) => {
      if (!input.isTensor) throw new Error(`${input.name}: not a tensor`);
      return { name: input.name, dims: input.shape.map(Number) };
    });
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

  private constructor(private readonly sessions: Sessions) {
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
   * Runs the network on the next `frames` frames: `erb` holds frames x ERB_BANDS features, `spec` the
   * complex features as 2 planes (re, then im) of frames x DF_BINS. The outputs are valid until the
   * network's next run.
   */
  run(erb: Float32Array, spec: Float32Array, frames: number): Promise<DfnOutputs> {
    const run = queue.then(async () => {
      if (ending) throw new Error('the thread is ending');
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
    });
    queue = run.catch(() => undefined);
    return run;
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
