// DeepFilterNet3's network (models/deepfilternet3: its encoder, ERB decoder and deep-filter decoder as
// three ONNX graphs) run by onnxruntime-web's WebAssembly build on one thread. The sessions are made
// once per thread, on first use, reused by every job, and released when the thread's work ends
// (releaseDfnModel). The graphs take a whole sequence of frames and keep no state between calls.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { InferenceSession, Tensor } from 'onnxruntime-web';
import { DF_BINS, ERB_BANDS } from './dfn-features';

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
  encoder: InferenceSession;
  erbDecoder: InferenceSession;
  dfDecoder: InferenceSession;
  TensorOf: typeof Tensor;
}

let sessions: Promise<Sessions> | undefined;
/** How many times this thread has made the sessions (once, unless released). */
let loads = 0;
/** Runs one at a time: a session is not to be run twice at once. */
let queue: Promise<unknown> = Promise.resolve();

function loadSessions(): Promise<Sessions> {
  sessions ??= (async () => {
    loads++;
    const ort = await import('onnxruntime-web');
    // The engine's worker threads are the parallelism: one WebAssembly thread per session, in this
    // thread (no proxy worker), the runtime's files read from its own package folder, never fetched.
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.proxy = false;
    ort.env.wasm.wasmPaths = `${pathToFileURL(join(require.resolve('onnxruntime-web/ort-wasm-simd-threaded.wasm'), '..')).href}/`;
    const options: InferenceSession.SessionOptions = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
    const open = (name: string) => ort.InferenceSession.create(join(MODEL_DIR, `${name}.onnx`), options);
    return {
      encoder: await open('enc'),
      erbDecoder: await open('erb_dec'),
      dfDecoder: await open('df_dec'),
      TensorOf: ort.Tensor,
    };
  })();
  sessions.catch(() => (sessions = undefined));
  return sessions;
}

/** Whether this thread holds the sessions now, and how often it made them (for the tests of reuse and release). */
export function dfnModelState(): { loaded: boolean; loads: number } {
  return { loaded: sessions !== undefined, loads };
}

/**
 * Runs the network on `frames` frames: `erb` holds frames x ERB_BANDS features, `spec` the complex
 * features as 2 planes (re, then im) of frames x DF_BINS.
 */
export function runDfn(erb: Float32Array, spec: Float32Array, frames: number): Promise<DfnOutputs> {
  const run = queue.then(async () => {
    const { encoder, erbDecoder, dfDecoder, TensorOf } = await loadSessions();
    const encoded = await encoder.run({
      feat_erb: new TensorOf('float32', erb.subarray(0, frames * ERB_BANDS), [1, 1, frames, ERB_BANDS]),
      feat_spec: new TensorOf('float32', spec.subarray(0, 2 * frames * DF_BINS), [1, 2, frames, DF_BINS]),
    });
    const { e0, e1, e2, e3, emb, c0, lsnr } = encoded;
    const [{ m }, { coefs }] = [await erbDecoder.run({ emb, e3, e2, e1, e0 }), await dfDecoder.run({ emb, c0 })];
    return {
      frames,
      mask: m.data as Float32Array,
      coefs: coefs.data as Float32Array,
      lsnr: lsnr.data as Float32Array,
    };
  });
  queue = run.catch(() => undefined);
  return run;
}

/** Frees the sessions of this thread (the next run loads them again). */
export async function releaseDfnModel(): Promise<void> {
  const loading = sessions;
  sessions = undefined;
  await queue;
  const loaded = await loading?.catch(() => undefined);
  if (loaded) await Promise.all([loaded.encoder.release(), loaded.erbDecoder.release(), loaded.dfDecoder.release()]);
}
