// The part of an Emscripten module's runtime that the WebAssembly wrappers use.
export interface EmscriptenModule {
  HEAPF32: Float32Array;
  HEAPU32: Uint32Array;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
}

/** A Float32Array living in the module's memory; re-viewed on every use because the heap can grow. */
export class HeapFloats {
  readonly pointer: number;

  constructor(
    private readonly module: EmscriptenModule,
    readonly length: number,
  ) {
    this.pointer = module._malloc(length * 4);
    if (this.pointer === 0) throw new Error(`could not allocate ${length} floats in WebAssembly memory`);
  }

  view(length = this.length): Float32Array {
    return this.module.HEAPF32.subarray(this.pointer >> 2, (this.pointer >> 2) + length);
  }

  free(): void {
    this.module._free(this.pointer);
  }
}
