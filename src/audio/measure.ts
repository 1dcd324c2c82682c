// Measures a WAV file's loudness and peaks, streamed.
import { LoudnessMeter, type LoudnessMeasurement } from './loudness-meter';
import { openWav } from './wav-reader';

export async function measureWavFile(path: string, onProgress?: (share: number) => void): Promise<LoudnessMeasurement> {
  const source = await openWav(path);
  try {
    const { sampleRate, channels, channelMask, frames } = source.layout;
    const meter = new LoudnessMeter(sampleRate, channels, channelMask);
    let read = 0;
    for await (const block of source.blocks()) {
      meter.add(block.samples, block.frames);
      read += block.frames;
      onProgress?.(Math.min(1, read / Math.max(1, frames)));
    }
    return meter.finish();
  } finally {
    await source.close();
  }
}
