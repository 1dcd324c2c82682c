// Media for the speech-quality benchmark, made in the run: the speech sample the package ships at
// 48 kHz (ffmpeg's resampler), pink noise and wavering hum from a seed. White noise, WAV reading and
// mixing at an SNR are the enhancement tests' own helpers.
import { join } from 'node:path';
import { seededNoise, SPEECH_SAMPLE } from '../test/enhance/speech-sample';
import { readWav } from '../test/enhance/test-media';
import { ffmpeg } from '../test/fixtures/ffmpeg';

export const RATE = 48_000;

export async function readMono(path: string): Promise<Float32Array> {
  return (await readWav(path)).channels[0];
}

/** The sample `times` over, at 48 kHz float, through an ffmpeg filter of choice (default: none). */
export async function speech(dir: string, name: string, times: number, filter = 'anull'): Promise<Float32Array> {
  const path = join(dir, `${name}.wav`);
  await ffmpeg([
    '-stream_loop',
    String(times - 1),
    '-i',
    SPEECH_SAMPLE,
    '-af',
    filter,
    '-ar',
    String(RATE),
    '-c:a',
    'pcm_f32le',
    path,
  ]);
  return readMono(path);
}

/** Pink (1/f) noise: white noise through Paul Kellet's economy filter (within 0.5 dB of -3 dB/octave). */
export function pink(length: number, seed: number): Float32Array {
  const next = seededNoise(seed);
  let b0 = 0;
  let b1 = 0;
  let b2 = 0;
  return Float32Array.from({ length }, () => {
    const w = next();
    b0 = 0.99765 * b0 + w * 0.099046;
    b1 = 0.963 * b1 + w * 0.2965164;
    b2 = 0.57 * b2 + w * 1.0526913;
    return b0 + b1 + b2 + w * 0.1848;
  });
}

/** Mains hum as a ground loop gives it: 50 Hz and 9 harmonics, odd ones stronger, slowly wavering. */
export function hum(length: number): Float32Array {
  const out = new Float32Array(length);
  for (let h = 1; h <= 10; h++) {
    const amplitude = (h % 2 ? 1 : 0.5) / h;
    for (let i = 0; i < length; i++)
      out[i] +=
        amplitude *
        Math.sin((2 * Math.PI * 50 * h * i) / RATE + h * 1.3 + 0.2 * Math.sin((2 * Math.PI * 0.1 * i) / RATE));
  }
  return out;
}
