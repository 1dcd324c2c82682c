// Measures a WAV file's loudness and peaks, streamed.
import { LoudnessMeter, type LoudnessMeasurement } from './loudness-meter';
import { openWav } from './wav-reader';

/** The whole file, or the stretch of it from `fromSeconds` on, `seconds` long. */
export async function measureWavFile(
  path: string,
  stretch?: { fromSeconds: number; seconds: number },
): Promise<LoudnessMeasurement> {
  const source = await openWav(path);
  try {
    const { sampleRate, channels, channelMask } = source.layout;
    const meter = new LoudnessMeter(sampleRate, channels, channelMask);
    const from = stretch ? Math.round(stretch.fromSeconds * sampleRate) : 0;
    const to = stretch ? from + Math.round(stretch.seconds * sampleRate) : undefined;
    for await (const block of source.blocks(from, to)) meter.add(block.samples, block.frames);
    return meter.finish();
  } finally {
    await source.close();
  }
}
