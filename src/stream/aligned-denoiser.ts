// What a live stream asks of each channel's denoiser (RNNoise's ChannelDenoiser, LARK's LarkDenoiser):
// the one type both the stream and the denoisers name, kept below both.

/** One channel's denoiser: output sample n is input sample n, given at most maxLag() samples late. */
export interface AlignedDenoiser {
  push(samples: Float32Array, frames: number): Float32Array | Promise<Float32Array>;
  /** The rest of the output, up to the input's length. */
  flush(): Float32Array | Promise<Float32Array>;
  maxLag(): number;
  /** Bytes of the buffers and model state it holds for its signal (not what it shares with others). */
  memoryBytes(): number;
  destroy(): void;
}
