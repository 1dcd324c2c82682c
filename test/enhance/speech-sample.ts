// The speech sample the package ships (espeak-ng, 16 kHz mono), read once for the enhancement tests, and
// what those tests measure it with: level, noise and alignment.
import { join } from 'node:path';
import { openWav } from '../../src/audio/wav-reader';

export const SPEECH_SAMPLE = join(__dirname, '..', '..', '..', 'examples', 'speech-sample.wav');

export async function readSpeechSample(): Promise<{ samples: Float32Array; sampleRate: number }> {
  const source = await openWav(SPEECH_SAMPLE);
  try {
    const samples = new Float32Array(source.layout.frames);
    let at = 0;
    for await (const block of source.blocks()) {
      samples.set(block.samples[0].subarray(0, block.frames), at);
      at += block.frames;
    }
    return { samples, sampleRate: source.layout.sampleRate };
  } finally {
    await source.close();
  }
}

/** A deterministic noise source (xorshift), uniform in -1..1. */
export function seededNoise(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return ((state >>> 0) / 0xffffffff) * 2 - 1;
  };
}

export function rms(samples: Float32Array, from = 0, to = samples.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i] * samples[i];
  return Math.sqrt(sum / Math.max(1, to - from));
}

export const db = (ratio: number) => 20 * Math.log10(ratio);

/** The lag (in samples) at which `output` best matches `input`, searched within ±range. */
export function bestLag(input: Float32Array, output: Float32Array, range: number): number {
  let best = -Infinity;
  let lag = 0;
  for (let d = -range; d <= range; d++) {
    let sum = 0;
    for (let i = Math.max(0, -d); i < input.length && i + d < output.length; i++) sum += input[i] * output[i + d];
    if (sum > best) {
      best = sum;
      lag = d;
    }
  }
  return lag;
}
