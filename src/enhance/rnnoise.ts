// RNNoise (Xiph's recurrent-network noise suppressor, @echogarden/rnnoise-wasm) for one thread: the
// WebAssembly instance is loaded once per thread and reused by every job; each channel gets a state of
// its own, freed when the job ends.
import { HeapFloats, type EmscriptenModule } from './emscripten';
import { importEsm } from './esm-import';

export const RNNOISE_RATE = 48_000;
export const RNNOISE_FRAME = 480;
/**
 * Output frame n holds the input of frame n-1 (RNNoise analyses with a 2-frame window and
 * overlap-adds): the denoised signal lags its input by exactly one frame (checked in the tests).
 */
export const RNNOISE_LATENCY = RNNOISE_FRAME;
/** RNNoise works on samples in 16-bit scale. */
const SCALE = 32768;

interface RnnoiseModule extends EmscriptenModule {
  _rnnoise_create(model: number): number;
  _rnnoise_get_size(): number;
  _rnnoise_destroy(state: number): void;
  _rnnoise_process_frame(state: number, out: number, input: number): number;
}

export interface FrameDenoiser {
  /** Denoises one frame of RNNOISE_FRAME samples (full scale ±1); returns its voice probability 0..1. */
  process(input: Float32Array, output: Float32Array): number;
  /** Bytes of WebAssembly memory it holds: its state and its frame buffers. */
  readonly memoryBytes: number;
  destroy(): void;
}

export interface Rnnoise {
  createDenoiser(): FrameDenoiser;
}

let loaded: Promise<Rnnoise> | undefined;

export function loadRnnoise(): Promise<Rnnoise> {
  loaded ??= (async () => {
    const factory = (await importEsm<{ default: () => Promise<RnnoiseModule> }>('@echogarden/rnnoise-wasm')).default;
    const module = await factory();
    return { createDenoiser: () => createDenoiser(module) };
  })();
  return loaded;
}

function createDenoiser(module: RnnoiseModule): FrameDenoiser {
  const state = module._rnnoise_create(0);
  if (state === 0) throw new Error('RNNoise could not allocate its state');
  const input = new HeapFloats(module, RNNOISE_FRAME);
  const output = new HeapFloats(module, RNNOISE_FRAME);
  let destroyed = false;
  return {
    memoryBytes: module._rnnoise_get_size() + 2 * RNNOISE_FRAME * 4,
    process(samples, out) {
      const heapIn = input.view();
      for (let i = 0; i < RNNOISE_FRAME; i++) heapIn[i] = samples[i] * SCALE;
      const voice = module._rnnoise_process_frame(state, output.pointer, input.pointer);
      const heapOut = output.view();
      for (let i = 0; i < RNNOISE_FRAME; i++) out[i] = heapOut[i] / SCALE;
      return voice;
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      module._rnnoise_destroy(state);
      input.free();
      output.free();
    },
  };
}
