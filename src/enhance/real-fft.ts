// Real FFT of any even size (mixed radix: 960 = 2^6 * 3 * 5) with KISS FFT (@echogarden/kissfft-wasm),
// loaded once per thread. Both directions are unnormalized, as KISS FFT computes them: a forward then an
// inverse transform gives the input times the size.
import { HeapFloats, type EmscriptenModule } from './emscripten';
import { importEsm } from './esm-import';

interface KissModule extends EmscriptenModule {
  _kiss_fftr_alloc(size: number, inverse: number, memory: number, memoryLength: number): number;
  _kiss_fftr(config: number, time: number, frequency: number): void;
  _kiss_fftri(config: number, frequency: number, time: number): void;
  _free(pointer: number): void;
}

let loaded: Promise<KissModule> | undefined;

function loadKiss(): Promise<KissModule> {
  loaded ??= importEsm<{ default: () => Promise<KissModule> }>('@echogarden/kissfft-wasm').then((m) => m.default());
  return loaded;
}

export class RealFft {
  private constructor(
    private readonly module: KissModule,
    readonly size: number,
    private readonly forwardConfig: number,
    private readonly inverseConfig: number,
    private readonly time: HeapFloats,
    /** Interleaved re, im of the size / 2 + 1 bins. */
    private readonly frequency: HeapFloats,
  ) {}

  static async create(size: number): Promise<RealFft> {
    if (size % 2 !== 0) throw new Error(`a real FFT needs an even size, not ${size}`);
    const module = await loadKiss();
    return new RealFft(
      module,
      size,
      module._kiss_fftr_alloc(size, 0, 0, 0),
      module._kiss_fftr_alloc(size, 1, 0, 0),
      new HeapFloats(module, size),
      new HeapFloats(module, size + 2),
    );
  }

  /** `time` (size samples) to `spectrum` (interleaved re, im: size + 2 values). */
  forward(time: Float32Array, spectrum: Float32Array): void {
    this.time.view().set(time.subarray(0, this.size));
    this.module._kiss_fftr(this.forwardConfig, this.time.pointer, this.frequency.pointer);
    spectrum.set(this.frequency.view());
  }

  /** `spectrum` (interleaved, size + 2 values) to `time` (size samples), scaled by the size. */
  inverse(spectrum: Float32Array, time: Float32Array): void {
    this.frequency.view().set(spectrum.subarray(0, this.size + 2));
    this.module._kiss_fftri(this.inverseConfig, this.frequency.pointer, this.time.pointer);
    time.set(this.time.view());
  }

  destroy(): void {
    this.module._free(this.forwardConfig);
    this.module._free(this.inverseConfig);
    this.time.free();
    this.frequency.free();
  }
}
