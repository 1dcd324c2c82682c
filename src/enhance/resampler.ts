// Band-limited sample-rate conversion with the Speex resampler (@echogarden/speex-resampler-wasm, its
// WebAssembly SIMD build, which Node 20 and 22 run), one stream per channel. Output is aligned with
// input: the resampler's own delay is skipped at the start and flushed out at the end, so N input
// samples give round(N * out / in) output samples, in step.
import { HeapFloats, type EmscriptenModule } from './emscripten';
import { importEsm } from './esm-import';

/**
 * Speex quality 0..10. 3 (Speex's voice setting: a 48-tap Kaiser-windowed sinc, passband to 0.9 of the
 * lower Nyquist, 19.7 kHz at 44.1 kHz) errs under -50 dB on speech-band content (tests) and, with the
 * SIMD build, costs a third of what 7 does: the chain stays near RNNoise's own speed (bench).
 */
export const RESAMPLER_QUALITY = 3;
const CHUNK = 8192;

interface SpeexModule extends EmscriptenModule {
  _speex_resampler_init(
    channels: number,
    inRate: number,
    outRate: number,
    quality: number,
    errorPointer: number,
  ): number;
  _speex_resampler_process_float(
    state: number,
    channel: number,
    input: number,
    inputLength: number,
    output: number,
    outputLength: number,
  ): number;
  _speex_resampler_skip_zeros(state: number): number;
  _speex_resampler_get_input_latency(state: number): number;
  _speex_resampler_destroy(state: number): void;
}

let loaded: Promise<SpeexModule> | undefined;

function loadSpeex(): Promise<SpeexModule> {
  loaded ??= importEsm<{ default: () => Promise<SpeexModule> }>('@echogarden/speex-resampler-wasm/simd').then((m) =>
    m.default(),
  );
  return loaded;
}

export class StreamResampler {
  private readonly input: HeapFloats;
  private readonly output: HeapFloats;
  private readonly lengths: number;
  private out: Float32Array = new Float32Array(CHUNK);
  /** Input samples pushed (not counting the flush's zeros). */
  private consumed = 0;
  private produced = 0;

  private constructor(
    private readonly module: SpeexModule,
    private readonly state: number,
    readonly inputRate: number,
    readonly outputRate: number,
  ) {
    this.input = new HeapFloats(module, CHUNK);
    this.output = new HeapFloats(module, CHUNK * Math.ceil(outputRate / inputRate) + 64);
    this.lengths = module._malloc(8);
  }

  static async create(inputRate: number, outputRate: number, quality = RESAMPLER_QUALITY): Promise<StreamResampler> {
    const module = await loadSpeex();
    const error = module._malloc(4);
    const state = module._speex_resampler_init(1, inputRate, outputRate, quality, error);
    const code = module.HEAPU32[error >> 2];
    module._free(error);
    if (state === 0 || code !== 0)
      throw new Error(`the resampler refused ${inputRate} Hz -> ${outputRate} Hz (speex error ${code})`);
    module._speex_resampler_skip_zeros(state);
    return new StreamResampler(module, state, inputRate, outputRate);
  }

  /** Input samples the resampler holds back before their output can be made (its filter's half length). */
  get inputLatency(): number {
    return this.module._speex_resampler_get_input_latency(this.state);
  }

  /** Resamples `frames` samples; the returned view is valid until the next call. */
  push(samples: Float32Array, frames: number): Float32Array {
    const out = this.run(samples, frames, Infinity);
    this.consumed += frames;
    return out;
  }

  /** The samples still inside the resampler, so that the whole output matches the whole input. */
  flush(): Float32Array {
    const target = Math.round((this.consumed * this.outputRate) / this.inputRate);
    const zeros = new Float32Array(this.module._speex_resampler_get_input_latency(this.state) + 2);
    return this.run(zeros, zeros.length, target);
  }

  /** Bytes of its buffers (Speex's own filter state, a few KiB inside the library, is not counted). */
  memoryBytes(): number {
    return this.out.byteLength + (this.input.length + this.output.length) * 4;
  }

  destroy(): void {
    this.module._speex_resampler_destroy(this.state);
    this.input.free();
    this.output.free();
    this.module._free(this.lengths);
  }

  /** Feeds all of `samples`, keeping output only up to `limit` samples in total. */
  private run(samples: Float32Array, frames: number, limit: number): Float32Array {
    let written = 0;
    for (let offset = 0; offset < frames;) {
      const n = Math.min(CHUNK, frames - offset);
      this.input.view(n).set(samples.subarray(offset, offset + n));
      let fed = 0;
      while (fed < n) {
        const lengths = this.module.HEAPU32;
        lengths[this.lengths >> 2] = n - fed;
        lengths[(this.lengths >> 2) + 1] = this.output.length;
        this.module._speex_resampler_process_float(
          this.state,
          0,
          this.input.pointer + fed * 4,
          this.lengths,
          this.output.pointer,
          this.lengths + 4,
        );
        const used = this.module.HEAPU32[this.lengths >> 2];
        const made = Math.min(this.module.HEAPU32[(this.lengths >> 2) + 1], Math.max(0, limit - this.produced));
        if (written + made > this.out.length) this.out = grow(this.out, written + made);
        this.out.set(this.output.view(made), written);
        written += made;
        this.produced += made;
        fed += used;
        if (used === 0 && made === 0) break;
      }
      offset += n;
    }
    return this.out.subarray(0, written);
  }
}

function grow(array: Float32Array, least: number): Float32Array {
  const bigger = new Float32Array(Math.max(least, array.length * 2));
  bigger.set(array);
  return bigger;
}
