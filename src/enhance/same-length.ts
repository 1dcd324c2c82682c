// A channel's output exactly as long as its input: a denoiser that resamples to 48 kHz and back gives its
// output a little late, and a resampler may round a sample short or over. Output sample n stays input
// sample n because nothing is added at the start and the end is cut or padded to the input's length.

/** Counts the samples that went into one channel and those that came out. */
export class SameLength {
  private inputFrames = 0;
  private outputFrames = 0;

  /** `frames` samples went in. */
  took(frames: number): void {
    this.inputFrames += frames;
  }

  /** Of `samples`, what may come out so far: never more than went in (a view). */
  give(samples: Float32Array): Float32Array {
    const n = Math.min(samples.length, this.inputFrames - this.outputFrames);
    this.outputFrames += n;
    return samples.subarray(0, n);
  }

  /** The last of the output, padded with silence where a resampler rounded a sample short. */
  giveLast(tail: Float32Array): Float32Array {
    const missing = this.inputFrames - this.outputFrames - tail.length;
    return this.give(missing > 0 ? concat(tail, new Float32Array(missing)) : tail);
  }
}

/** `a` then `b`, in a new array. */
export function concat(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
