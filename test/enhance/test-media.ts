// Test media for the enhancement tests: the shipped speech sample at another rate (resampled by ffmpeg,
// the reference tool), noises made here from a seed, and WAV files read back as planar arrays.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openWav } from '../../src/audio/wav-reader';
import { encodeWav } from '../fixtures/audio';
import { ffmpeg } from '../fixtures/ffmpeg';
import { rms, seededNoise, SPEECH_SAMPLE } from './speech-sample';

export async function speechAt(sampleRate: number, dir: string): Promise<Float32Array> {
  const path = join(dir, `speech-${sampleRate}.wav`);
  await ffmpeg(['-i', SPEECH_SAMPLE, '-ar', String(sampleRate), '-c:a', 'pcm_f32le', path]);
  return (await readWav(path)).channels[0];
}

export async function readWav(path: string): Promise<{ channels: Float32Array[]; sampleRate: number }> {
  const source = await openWav(path);
  try {
    const channels = Array.from({ length: source.layout.channels }, () => new Float32Array(source.layout.frames));
    let at = 0;
    for await (const block of source.blocks()) {
      block.samples.forEach((samples, c) => channels[c].set(samples.subarray(0, block.frames), at));
      at += block.frames;
    }
    return { channels, sampleRate: source.layout.sampleRate };
  } finally {
    await source.close();
  }
}

export async function writeFloatWav(path: string, sampleRate: number, channels: Float32Array[]): Promise<void> {
  await writeFile(path, encodeWav({ sampleRate, channels: channels.length, bits: 32, float: true }, channels));
}

/** RMS of the speech where it speaks (samples above -60 dBFS), the level an SNR is given against. */
export function activeRms(speech: Float32Array): number {
  let sum = 0;
  let count = 0;
  for (const s of speech) {
    if (Math.abs(s) > 1e-3) {
      sum += s * s;
      count++;
    }
  }
  return Math.sqrt(sum / count);
}

export function whiteNoise(length: number, seed: number): Float32Array {
  const noise = seededNoise(seed);
  return Float32Array.from({ length }, noise);
}

/** Mains hum: a fundamental and its harmonics with falling amplitudes, as a ground loop gives. */
export function hum(length: number, sampleRate: number, fundamental: number, harmonics = 8): Float32Array {
  const out = new Float32Array(length);
  for (let h = 1; h <= harmonics; h++) {
    const amplitude = 1 / h;
    const w = (2 * Math.PI * fundamental * h) / sampleRate;
    for (let i = 0; i < length; i++) out[i] += amplitude * Math.sin(w * i + h);
  }
  return out;
}

/** `speech` with `noise` added at `snrDb` below the speech's active level. */
export function mix(speech: Float32Array, noise: Float32Array, snrDb: number): Float32Array {
  const scale = (activeRms(speech) / rms(noise)) * 10 ** (-snrDb / 20);
  return speech.map((s, i) => s + scale * noise[i]);
}
