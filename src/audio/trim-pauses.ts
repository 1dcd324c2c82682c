// Pauses shortened: every run of frames without voice longer than `maxPauseS` keeps its first and last
// halves of that length, and what lies between is cut with a short equal-power crossfade inside the
// pause, so speech is never touched. The cuts are returned, for the report and for the chapters.
import { allocatePlanar } from './pcm-codec';
import { openWav } from './wav-reader';
import { WavWriter } from './wav-writer';

/** The crossfade at each cut (seconds): long enough not to click, short against any pause kept. */
export const CUT_FADE_S = 0.02;
/** A frame with less voice activity than this is pause. */
const VOICE_THRESHOLD = 0.5;

export interface PauseCut {
  /** Where the cut starts and ends in the input (seconds). */
  start: number;
  end: number;
}

export interface TrimReport {
  cuts: PauseCut[];
  /** Seconds cut in all. */
  removedS: number;
  /** Pauses found longer than the limit (each cut once). */
  pausesTrimmed: number;
}

/**
 * The cuts for `voice` (activity per frame of `frameSeconds`): each pause over `maxPauseS` loses its
 * middle, so it lasts `maxPauseS` afterwards (the crossfade lies within the kept length).
 */
export function planCuts(voice: Float32Array, frameSeconds: number, maxPauseS: number): PauseCut[] {
  const cuts: PauseCut[] = [];
  let start = -1;
  const close = (end: number) => {
    const length = (end - start) * frameSeconds;
    if (start >= 0 && length > maxPauseS) {
      const from = start * frameSeconds + maxPauseS / 2;
      cuts.push({ start: from, end: from + (length - maxPauseS) });
    }
    start = -1;
  };
  for (let k = 0; k < voice.length; k++) {
    if (voice[k] < VOICE_THRESHOLD) {
      if (start < 0) start = k;
    } else if (start >= 0) close(k);
  }
  if (start >= 0) close(voice.length);
  return cuts;
}

/** Writes `input` to `output` (the input's sample format) without the `cuts`. */
export async function cutWavFile(input: string, output: string, cuts: readonly PauseCut[]): Promise<TrimReport> {
  const source = await openWav(input);
  let writer: WavWriter | undefined;
  try {
    const { layout } = source;
    const { channels, sampleRate } = layout;
    const fade = Math.max(1, Math.round(CUT_FADE_S * sampleRate));
    // In samples: [start, end) is dropped; the `fade` samples before `start` are held and mixed into the
    // `fade` samples before `end`, which then stand in their place.
    const spans = cuts
      .map((cut) => ({ start: Math.round(cut.start * sampleRate), end: Math.round(cut.end * sampleRate) }))
      .filter((span) => span.end - span.start > fade && span.start >= fade && span.end <= layout.frames);
    writer = await WavWriter.create(output, layout);
    const held = allocatePlanar(channels, fade);
    let next = 0; // the span ahead
    let at = 0;
    let removed = 0;
    for await (const block of source.blocks()) {
      const out = allocatePlanar(channels, block.frames);
      let written = 0;
      for (let i = 0; i < block.frames; i++, at++) {
        const span = spans[next];
        if (span && at >= span.start - fade && at < span.start) {
          for (let c = 0; c < channels; c++) held[c][at - (span.start - fade)] = block.samples[c][i];
          continue;
        }
        if (span && at >= span.start && at < span.end - fade) continue;
        if (span && at >= span.end - fade && at < span.end) {
          const k = at - (span.end - fade);
          const inGain = Math.sin(((k + 0.5) / fade) * (Math.PI / 2));
          const outGain = Math.cos(((k + 0.5) / fade) * (Math.PI / 2));
          for (let c = 0; c < channels; c++) out[c][written] = held[c][k] * outGain + block.samples[c][i] * inGain;
          written++;
          if (at === span.end - 1) {
            removed += span.end - span.start;
            next++;
          }
          continue;
        }
        for (let c = 0; c < channels; c++) out[c][written] = block.samples[c][i];
        written++;
      }
      if (written > 0) await writer.write(out, written, false);
    }
    await writer.finish();
    writer = undefined;
    const done = spans.slice(0, next).map((span) => ({ start: span.start / sampleRate, end: span.end / sampleRate }));
    return { cuts: done, removedS: removed / sampleRate, pausesTrimmed: done.length };
  } finally {
    await writer?.abort();
    await source.close();
  }
}

/** Where a moment of the input lands once the cuts are made: a moment inside a cut lands where the cut is. */
export function timeAfterCuts(seconds: number, cuts: readonly PauseCut[]): number {
  let removed = 0;
  for (const cut of cuts) {
    if (seconds >= cut.end) removed += cut.end - cut.start;
    else if (seconds > cut.start) removed += seconds - cut.start;
  }
  return seconds - removed;
}
