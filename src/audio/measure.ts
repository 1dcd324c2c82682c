// Measures a WAV file's loudness and peaks, streamed.
import { LoudnessMeter, type LoudnessMeasurement } from './loudness-meter';
import { openWav } from './wav-reader';

/** The whole file, or the stretch of it from `fromSeconds` on, `seconds` long. */
export async function measureWavFile(
  path: string,
  stretch?: { fromSeconds: number; seconds: number },
  /** Told the share of it read (0 to 1) as it goes. */
  onProgress?: (share: number) => void,
): Promise<LoudnessMeasurement> {
  const source = await openWav(path);
  try {
    const { sampleRate, channels, channelMask } = source.layout;
    const meter = new LoudnessMeter(sampleRate, channels, channelMask);
    const from = stretch ? Math.round(stretch.fromSeconds * sampleRate) : 0;
    const to = stretch ? from + Math.round(stretch.seconds * sampleRate) : undefined;
    const frames = Math.max(1, (to ?? source.layout.frames) - from);
    let read = 0;
    for await (const block of source.blocks(from, to)) {
      meter.add(block.samples, block.frames);
      read += block.frames;
      onProgress?.(Math.min(1, read / frames));
    }
    return meter.finish();
  } finally {
    await source.close();
  }
}
