// Streams a WAV file's samples as planar blocks: memory is one block, whatever the file's length.
import { open } from 'node:fs/promises';
import { allocatePlanar, decodeFrames, type Planar } from './pcm-codec';
import { readWavLayout, WavFormatError, type WavLayout } from './wav-format';

/** Frames per block: large enough that per-block overhead vanishes, small enough to stay in cache-ish sizes. */
export const BLOCK_FRAMES = 32_768;

export interface WavSource {
  layout: WavLayout;
  /** Blocks of up to BLOCK_FRAMES frames (of frames [from, to) when given); each block's arrays are reused for the next one. */
  blocks(from?: number, to?: number): AsyncGenerator<{ samples: Planar; frames: number }, void>;
  close(): Promise<void>;
}

export async function openWav(path: string): Promise<WavSource> {
  const file = await open(path, 'r');
  let layout: WavLayout;
  try {
    layout = await readWavLayout(file);
  } catch (err) {
    await file.close();
    throw err;
  }
  return {
    layout,
    async *blocks(from = 0, to = layout.frames) {
      // Own ArrayBuffer, so typed-array views of it are aligned.
      const bytes = new Uint8Array(new ArrayBuffer(BLOCK_FRAMES * layout.blockAlign));
      const samples = allocatePlanar(layout.channels, BLOCK_FRAMES);
      const end = Math.min(to, layout.frames);
      for (let done = Math.max(0, from); done < end;) {
        const frames = Math.min(BLOCK_FRAMES, end - done);
        const length = frames * layout.blockAlign;
        const { bytesRead } = await file.read(bytes, 0, length, layout.dataOffset + done * layout.blockAlign);
        if (bytesRead < length)
          throw new WavFormatError(
            `truncated WAV: the file ended at frame ${done + Math.floor(bytesRead / layout.blockAlign)} of ${layout.frames}`,
          );
        decodeFrames(bytes, frames, layout, samples);
        if (layout.encoding === 'float') rejectNonFinite(samples, frames, done);
        done += frames;
        yield { samples, frames };
      }
    },
    close: () => file.close(),
  };
}

/** A float sample that is NaN or infinite (or a 64-bit one beyond float range) has no level to measure or scale. */
function rejectNonFinite(samples: Planar, frames: number, firstFrame: number): void {
  for (let c = 0; c < samples.length; c++) {
    const channel = samples[c];
    for (let i = 0; i < frames; i++) {
      const x = channel[i];
      if (x - x !== 0)
        throw new WavFormatError(
          `the WAV holds a sample that is not a finite number (${x}) at frame ${firstFrame + i}, channel ${c + 1}: float samples must be finite`,
        );
    }
  }
}
