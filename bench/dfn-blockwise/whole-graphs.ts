// DeepFilterNet3's shipped graphs (models/deepfilternet3: enc, erb_dec, df_dec, which keep no state
// between calls) run over a whole sequence of frames by onnxruntime-web's WebAssembly build on one
// thread: how the engine ran the network before its stateful graphs. Kept for the benchmarks' side by
// side and as the reference the stateful graphs are tested against; the engine does not use it.
import { join } from 'node:path';
import type { InferenceSession, Tensor } from 'onnxruntime-web';
import { DF_BINS, ERB_BANDS } from '../../src/enhance/dfn-features';
import { MODEL_DIR, type DfnOutputs } from '../../src/enhance/dfn-model';
import { loadOnnxRuntime } from '../../src/enhance/onnx-runtimes';

interface Sessions {
  encoder: InferenceSession;
  erbDecoder: InferenceSession;
  dfDecoder: InferenceSession;
  TensorOf: typeof Tensor;
}

let sessions: Promise<Sessions> | undefined;
/** Runs one at a time: a session is not to be run twice at once. */
let queue: Promise<unknown> = Promise.resolve();

function loadSessions(): Promise<Sessions> {
  sessions ??= (async () => {
    const runtime = await loadOnnxRuntime('wasm');
    // With every graph optimisation, as the engine ran these graphs.
    const open = (name: string) => runtime.open(join(MODEL_DIR, `${name}.onnx`), { graphOptimizationLevel: 'all' });
    return {
      encoder: await open('enc'),
      erbDecoder: await open('erb_dec'),
      dfDecoder: await open('df_dec'),
      TensorOf: runtime.Tensor,
    };
  })();
  sessions.catch(() => (sessions = undefined));
  return sessions;
}

/**
 * Runs the network on `frames` frames: `erb` holds frames x ERB_BANDS features, `spec` the complex
 * features as 2 planes (re, then im) of frames x DF_BINS.
 */
export function runWholeGraphs(erb: Float32Array, spec: Float32Array, frames: number): Promise<DfnOutputs> {
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
export async function releaseWholeGraphs(): Promise<void> {
  const loading = sessions;
  sessions = undefined;
  await queue;
  const loaded = await loading?.catch(() => undefined);
  if (loaded) await Promise.all([loaded.encoder.release(), loaded.erbDecoder.release(), loaded.dfDecoder.release()]);
}
