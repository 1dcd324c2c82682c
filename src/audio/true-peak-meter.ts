// The largest sample and the largest oversampled value (see peak-interpolator) over a stream of planar blocks.
// Most of a programme is far below its loudest peak: a stretch whose largest sample, times the filter's
// worst-case gain, cannot beat the peak found so far is skipped without interpolating. That is exact,
// not an estimate, and it makes true peak nearly free on speech.
import type { Planar } from './pcm-codec';
import { PeakInterpolator } from './peak-interpolator';

const CHUNK = 32;

export class TruePeakMeter {
  private readonly interpolator: PeakInterpolator;
  private readonly windows: Float32Array[];
  /** Frames seen, across blocks. */
  private frames = 0;
  private truePeak = 0;
  private samplePeak = 0;

  constructor(channels: number, sampleRate: number) {
    this.interpolator = new PeakInterpolator(sampleRate);
    // Each channel's window buffer starts with the last (taps - 1) samples of the previous block.
    this.windows = Array.from({ length: channels }, () => new Float32Array(this.interpolator.taps - 1));
  }

  add(samples: Planar, frames: number): void {
    // Only windows that lie wholly inside the file are interpolated: the file's edges are not a jump
    // from silence in the programme it was cut from, so they must not read as overshoot.
    const firstWindow = Math.max(0, this.interpolator.taps - 1 - this.frames);
    for (let c = 0; c < samples.length; c++) this.addChannel(c, samples[c], frames, firstWindow);
    this.frames += frames;
  }

  /** Linear peaks so far. */
  finish(): { truePeak: number; samplePeak: number } {
    return { truePeak: Math.max(this.truePeak, this.samplePeak), samplePeak: this.samplePeak };
  }

  private addChannel(c: number, samples: Float32Array, frames: number, firstWindow: number): void {
    const { interpolator } = this;
    const history = interpolator.taps - 1;
    let buf = this.windows[c];
    if (buf.length < history + frames) {
      const grown = new Float32Array(history + frames);
      grown.set(buf.subarray(0, history));
      buf = this.windows[c] = grown;
    }
    buf.set(samples.subarray(0, frames), history);
    const bound = interpolator.gainBound;
    for (let start = 0; start < frames; start += CHUNK) {
      const count = Math.min(CHUNK, frames - start);
      let max = 0;
      for (let i = start; i < start + count + history; i++) {
        const v = buf[i] < 0 ? -buf[i] : buf[i];
        if (v > max) max = v;
      }
      if (max > this.samplePeak) this.samplePeak = max;
      if (max * bound <= this.truePeak) continue;
      for (let s = Math.max(start, firstWindow); s < start + count; s++) {
        const v = interpolator.intervalPeak(buf, s);
        if (v > this.truePeak) this.truePeak = v;
      }
    }
    buf.copyWithin(0, frames, frames + history);
  }
}
