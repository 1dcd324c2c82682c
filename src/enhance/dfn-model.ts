// DeepFilterNet3's network run frame by frame: the stateful forms of its three graphs (encoder, ERB
// decoder, deep-filter decoder; models/deepfilternet3/*_stateful.onnx, derived from the shipped graphs by
// scripts/dfn-stateful-graphs.ts) take a chunk of new frames and the state the previous chunk left (each
// GRU's hidden state and the frames each looking-back convolution still needs), and give the chunk's
// outputs and the next state. A run in chunks of any size equals one run over the whole sequence.
//
// The sessions are made once per thread and runtime, on first use, shared by every signal of the thread
// (each DfnNetwork holds its own state), and released when the thread's work ends (releaseDfnModel).
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
      return {
        runtime: runtime.kind,
        encoder: await open('enc'),
        erbDecoder: await open('erb_dec'),
        dfDecoder: await open('df_dec'),
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

/** The network over one signal: feed it the signal's frames in order, in chunks of any size. */
export class DfnNetwork {
  /** The state each graph's next run takes, by input name (zeros before the first run). */
  private readonly state = new Map<string, Tensor>();

  private constructor(private readonly sessions: Sessions) {
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
   * complex features as 2 planes (re, then im) of frames x DF_BINS.
   */
  run(erb: Float32Array, spec: Float32Array, frames: number): Promise<DfnOutputs> {
    const run = queue.then(async () => {
      if (ending) throw new Error('the thread is ending');
      const { encoder, erbDecoder, dfDecoder, TensorOf } = this.sessions;
      const encoded = await encoder.run({
        feat_erb: new TensorOf('float32', erb.subarray(0, frames * ERB_BANDS), [1, 1, frames, ERB_BANDS]),
        feat_spec: new TensorOf('float32', spec.subarray(0, 2 * frames * DF_BINS), [1, 2, frames, DF_BINS]),
        ...this.statesOf(encoder),
      });
      const { e0, e1, e2, e3, emb, c0, lsnr } = encoded;
      const erbDecoded = await erbDecoder.run({ emb, e3, e2, e1, e0, ...this.statesOf(erbDecoder) });
      const dfDecoded = await dfDecoder.run({ emb, c0, ...this.statesOf(dfDecoder) });
      for (const outputs of [encoded, erbDecoded, dfDecoded]) this.keepStates(outputs);
      return {
        frames,
        mask: erbDecoded.m.data as Float32Array,
        coefs: dfDecoded.coefs.data as Float32Array,
        lsnr: lsnr.data as Float32Array,
      };
    });
    queue = run.catch(() => undefined);
    return run;
  }

  private statesOf(session: InferenceSession): Record<string, Tensor> {
    const feeds: Record<string, Tensor> = {};
    for (const name of session.inputNames) if (name.endsWith('.in')) feeds[name] = this.state.get(name)!;
    return feeds;
  }

  private keepStates(outputs: InferenceSession.OnnxValueMapType): void {
    for (const [name, value] of Object.entries(outputs))
      if (name.endsWith('.out')) this.state.set(`${name.slice(0, -'.out'.length)}.in`, value);
  }
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
