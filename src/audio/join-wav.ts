// Several WAV files of one rate and channel count joined into one float WAV, each overlapping the next by
// a crossfade (equal power: the sum of the two keeps its loudness through the fade) or butted end to end.
import { allocatePlanar, type Planar } from './pcm-codec';
import { openWav, type WavSource } from './wav-reader';
import { WavWriter } from './wav-writer';

export interface JoinedPart {
  /** Where the part starts in the joined file, and its length (frames). */
  startFrame: number;
  frames: number;
}

export interface JoinReport {
  sampleRate: number;
  parts: JoinedPart[];
  frames: number;
}

/**
 * Joins `paths` into `output` (32-bit float). `crossfadeFrames` is the overlap of each part with the next;
 * it is shortened to half of the shorter of the two, so no part is faded in and out at once.
 */
export async function joinWavFiles(paths: string[], output: string, crossfadeFrames: number): Promise<JoinReport> {
  const sources: WavSource[] = [];
  let writer: WavWriter | undefined;
  try {
    for (const path of paths) sources.push(await openWav(path));
    const { sampleRate, channels, channelMask } = sources[0].layout;
    const odd = sources.find((s) => s.layout.sampleRate !== sampleRate || s.layout.channels !== channels);
    if (odd)
      throw new Error(
        `the parts differ: ${odd.layout.sampleRate} Hz ${odd.layout.channels} ch against ${sampleRate} Hz ${channels} ch`,
      );
    const overlaps = sources
      .slice(1)
      .map((next, i) =>
        Math.max(
          0,
          Math.min(crossfadeFrames, Math.floor(sources[i].layout.frames / 2), Math.floor(next.layout.frames / 2)),
        ),
      );
    writer = await WavWriter.create(output, {
      sampleRate,
      channels,
      channelMask,
      bitsPerSample: 32,
      encoding: 'float',
      blockAlign: channels * 4,
    });
    const parts: JoinedPart[] = [];
    // The tail of the part before, held back to be mixed into the head of the next.
    let tail: Planar = allocatePlanar(channels, 0);
    let position = 0;
    for (let p = 0; p < sources.length; p++) {
      const frames = sources[p].layout.frames;
      const fadeIn = p > 0 ? overlaps[p - 1] : 0;
      const fadeOut = p < sources.length - 1 ? overlaps[p] : 0;
      parts.push({ startFrame: position, frames });
      const next = allocatePlanar(channels, fadeOut);
      let at = 0;
      for await (const block of sources[p].blocks()) {
        const out = allocatePlanar(channels, block.frames);
        let written = 0;
        for (let i = 0; i < block.frames; i++, at++) {
          if (at >= frames - fadeOut) {
            // Held back, faded out, for the next part's head.
            const k = at - (frames - fadeOut);
            const gain = Math.cos(((k + 0.5) / fadeOut) * (Math.PI / 2));
            for (let c = 0; c < channels; c++) next[c][k] = block.samples[c][i] * gain;
            continue;
          }
          for (let c = 0; c < channels; c++) {
            let value = block.samples[c][i];
            if (at < fadeIn) value = value * Math.sin(((at + 0.5) / fadeIn) * (Math.PI / 2)) + tail[c][at];
            out[c][written] = value;
          }
          written++;
        }
        if (written > 0) await writer.write(out, written, false);
      }
      // Its head was written mixed with the part before's tail; its own tail waits for the next part.
      position += frames - fadeOut;
      tail = next;
    }
    await writer.finish();
    writer = undefined;
    return { sampleRate, parts, frames: position };
  } finally {
    await writer?.abort();
    await Promise.all(sources.map((s) => s.close()));
  }
}
