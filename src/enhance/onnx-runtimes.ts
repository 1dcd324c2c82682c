// The two ONNX runtimes the network can run on, loaded once per thread:
//   - 'native': onnxruntime-node, when the user has installed it beside this package (e.g. in the
//     Node-RED user folder's node_modules). The package never requires it: its install script fetches
//     GPU libraries unless told to skip them, which would break an offline install.
//   - 'wasm': onnxruntime-web's WebAssembly build, a dependency of the package, always there.
// Both run on one thread with the same graphs; the engine's worker threads are the parallelism.
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { InferenceSession, Tensor } from 'onnxruntime-web';

export type OnnxRuntimeKind = 'native' | 'wasm';

export interface OnnxRuntime {
  kind: OnnxRuntimeKind;
  /** `options` on top of the runtime's own (the benchmarks' block-wise reference keeps the settings it ran with). */
  open(path: string, options?: InferenceSession.SessionOptions): Promise<InferenceSession>;
  Tensor: typeof Tensor;
}

type OrtModule = typeof import('onnxruntime-web');

let native: { module?: OrtModule; reason?: string } | undefined;
let wasm: Promise<OnnxRuntime> | undefined;

/**
 * onnxruntime-node as a user's install finds it (node's own resolution from this package's folder
 * upwards), or why not. Loaded before onnxruntime-web: where both share one onnxruntime-common, the
 * first to register the 'cpu' backend keeps it.
 */
function loadNative(): { module?: OrtModule; reason?: string } {
  if (native) return native;
  if (process.env.MEDIA_ENHANCE_ONNX_RUNTIME === 'wasm')
    return (native = { reason: 'MEDIA_ENHANCE_ONNX_RUNTIME=wasm' });
  try {
    if (webOwnsCpuBackend())
      return (native = {
        reason:
          "onnxruntime-web was loaded first in this thread and keeps the 'cpu' backend that onnxruntime-node would take",
      });
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional package, found only at run time
    const module = require('onnxruntime-node') as OrtModule;
    native = { module };
  } catch (error) {
    native = { reason: `onnxruntime-node cannot be loaded: ${(error as Error).message.split('\n')[0]}` };
  }
  return native;
}

/**
 * Whether onnxruntime-web registered its backends first in the onnxruntime-common that onnxruntime-node
 * would register in (one copy, where npm put them side by side). Then the 'cpu' name stays web's, though
 * node's priority is higher: sessions opened through onnxruntime-node would run on WebAssembly, and leave
 * the outputs handed to them unwritten (zeros). Seen where another module of the thread loaded
 * onnxruntime-web before (the benchmark's DNSMOS scorer).
 */
function webOwnsCpuBackend(): boolean {
  const nodePackage = require.resolve('onnxruntime-node');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the copy onnxruntime-node resolves, found at run time
  const common = require(require.resolve('onnxruntime-common', { paths: [dirname(nodePackage)] })) as OrtModule;
  return common.env.versions.web !== undefined && common.env.versions.node === undefined;
}

/** Platforms onnxruntime-node ships a CPU build for: there the native runtime would help. */
const NATIVE_PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64', 'win32-arm64'];

/**
 * Whether installing onnxruntime-node would speed DeepFilterNet3 up here: it ships a build for this
 * platform and is not found beside the package. Resolved, not loaded (no native library in this process).
 */
export function nativeRuntimeWouldHelp(): boolean {
  if (!NATIVE_PLATFORMS.includes(`${process.platform}-${process.arch}`)) return false;
  try {
    require.resolve('onnxruntime-node');
    return false;
  } catch {
    return true;
  }
}

/** Whether the native runtime can run here (and if not, why). */
export function nativeRuntime(): { available: boolean; reason?: string } {
  const loaded = loadNative();
  return { available: loaded.module !== undefined, reason: loaded.reason };
}

/** The runtime asked for, or for 'auto' the native one where it loads, else WebAssembly. */
export async function loadOnnxRuntime(kind: OnnxRuntimeKind | 'auto' = 'auto'): Promise<OnnxRuntime> {
  const loaded = loadNative();
  if (kind === 'native' && !loaded.module) throw new Error(loaded.reason);
  if (kind !== 'wasm' && loaded.module) {
    const ort = loaded.module;
    // One intra-op thread that sleeps when idle: spinning doubled the CPU time of a run here.
    const options = {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      enableCpuMemArena: false,
      enableMemPattern: false,
      executionMode: 'sequential',
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    } as InferenceSession.SessionOptions;
    return {
      kind: 'native',
      open: (path, more) => ort.InferenceSession.create(path, { ...options, ...more }),
      Tensor: ort.Tensor,
    };
  }
  wasm ??= (async () => {
    const ort = await import('onnxruntime-web');
    // One WebAssembly thread per session, in this thread (no proxy worker), the runtime's files read
    // from its own package folder, never fetched. Each thread compiles the runtime from its file, and V8
    // already shares the compiled code between the threads (its cache of compiled modules, keyed by
    // their bytes): handing every thread one compiled WebAssembly.Module (through the runtime's
    // instantiateWasm hook) measured no lower peak memory on two threads (382-406 MiB against 386-414),
    // so what each thread holds of its own is its WebAssembly memory, its session and its allocations.
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.proxy = false;
    ort.env.wasm.wasmPaths = `${pathToFileURL(join(require.resolve('onnxruntime-web/ort-wasm-simd-threaded.wasm'), '..')).href}/`;
    // No graph optimisation: its passes cost 25-30 MiB of peak memory that WebAssembly never gives back
    // (the optimiser's own memory and the code V8 compiles for it), for 10-20% less CPU on DeepFilterNet3's
    // joined graph (2-minute stream, two runs each: 7.1 s of CPU against 7.8-8.8 s; +181-187 MiB against
    // +156-157). Memory is what keeps a worker of the default model off a small machine; the stream is
    // still well over 1.4 times faster than the block-wise way before it.
    const options: InferenceSession.SessionOptions = {
      executionProviders: ['wasm'],
      graphOptimizationLevel: 'disabled',
      enableCpuMemArena: false,
      enableMemPattern: false,
    };
    return {
      kind: 'wasm' as const,
      open: (path: string, more?: InferenceSession.SessionOptions) =>
        ort.InferenceSession.create(path, { ...options, ...more }),
      Tensor: ort.Tensor,
    };
  })();
  wasm.catch(() => (wasm = undefined));
  return wasm;
}
