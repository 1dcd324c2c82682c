// The systems the quality benchmarks compare, each run on samples in memory through files in a work
// folder: the engine's own chain (enhanceWavFile, as the engine runs it, by model name) and an ffmpeg
// filter graph (afftdn, ffmpeg's denoiser, behind the chain's own high-pass).
import { join } from 'node:path';
import { enhanceWavFile } from '../src/enhance/chain';
import type { EnhanceOptions } from '../src/enhance/chain-types';
import { writeFloatWav } from '../test/enhance/test-media';
import { ffmpeg } from '../test/fixtures/ffmpeg';
import { RATE, readMono } from './quality-media';

/** ffmpeg's high-pass made the chain's own: 4th-order Butterworth at 80 Hz, as two biquads (its `highpass` alone is 2nd order). */
export const HIGHPASS = 'highpass=f=80:width_type=q:width=0.5412,highpass=f=80:width_type=q:width=1.3066';

export interface QualityRunners {
  /** `samples` (48 kHz mono) through the engine's enhancement chain. */
  chain: (samples: Float32Array, options: EnhanceOptions) => Promise<Float32Array>;
  /** `samples` (48 kHz mono) through an ffmpeg audio filter graph. */
  ffmpegFilter: (samples: Float32Array, filter: string) => Promise<Float32Array>;
}

export function qualityRunners(dir: string): QualityRunners {
  let files = 0;
  const file = async (samples: Float32Array) => {
    const path = join(dir, `f${files++}.wav`);
    await writeFloatWav(path, RATE, [samples]);
    return path;
  };
  return {
    chain: async (samples, options) => {
      const output = join(dir, `f${files++}.wav`);
      await enhanceWavFile(await file(samples), output, options);
      return readMono(output);
    },
    ffmpegFilter: async (samples, filter) => {
      const output = join(dir, `f${files++}.wav`);
      await ffmpeg(['-i', await file(samples), '-af', filter, '-c:a', 'pcm_f32le', output]);
      return readMono(output);
    },
  };
}
