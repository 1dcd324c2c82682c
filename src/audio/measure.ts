// Measures a WAV file's loudness and peaks, streamed.
import { LoudnessMeter, type LoudnessMeasurement } from './loudness-meter';
import { openWav } from './wav-reader';

export async function measureWavFile(path: string): Promise<LoudnessMeasurement> {
  const source = await openWav(path);
  try {
    const { sampleRate, channels, channelMask } = source.layout;
    const meter = new LoudnessMeter(sampleRate, channels, channelMask);
    for await (const block of source.blocks()) meter.add(block.samples, block.frames);
    return meter.finish();
  } finally {
    await source.close();
  }
}
