// The largest sample and the largest oversampled value (see peak-interpolator) over a stream of planar blocks,
// for the whole stream and for each second of it.
// Most of a programme is far below its loudest peak: a stretch whose largest sample, times the filter's
// worst-case gain, cannot beat the peak found so far in its second is skipped without interpolating. That
// is exact, not an estimate, and it makes true peak nearly free on speech.
import type { Planar } from './pcm-codec';
import { PeakInterpolator } from './peak-interpolator';

const CHUNK = 32;

export interface PeakMeasurement {
  /** Linear peaks of the whole stream. */
  truePeak: number;
  samplePeak: number;
  /** Linear true peak (sample peaks included) of each second; a last part second counts as one when it is half a second or more, else it joins the second before. */
  truePeakPerSecond: number[];
}

export class TruePeakMeter {
  private readonly interpolator: PeakInterpolator;
  private readonly windows: Float32Array[];
  /** Frames seen, across blocks. */
  private frames = 0;
  private samplePeak = 0;
  /** The highest true or sample peak of the seconds before the one under way. */
  private truePeak = 0;
  /** The highest true or sample peak of the second under way, and its highest sample. */
  private secondPeak = 0;
  private secondSamplePeak = 0;
  private readonly perSecond: number[] = [];

  constructor(
    channels: number,
    private readonly sampleRate: number,
  ) {
    this.interpolator = new PeakInterpolator(sampleRate);
    // Each channel's window buffer starts with the last (taps - 1) samples of the previous block.
    this.windows = Array.from({ length: channels }, () => new Float32Array(this.interpolator.taps - 1));
  }

  add(samples: Planar, frames: number): void {
    // A block is cut at whole seconds, so each part's peaks go to its own second.
    let at = 0;
    while (at < frames) {
      const secondEnd = (this.perSecond.length + 1) * this.sampleRate;
      const count = Math.min(frames - at, secondEnd - this.frames);
      // Only windows that lie wholly inside the file are interpolated: the file's edges are not a jump
      // from silence in the programme it was cut from, so they must not read as overshoot.
      const firstWindow = Math.max(0, this.interpolator.taps - 1 - this.frames);
      // The part's sample peak first: the second's true peak is at least that, so every stretch that
      // cannot beat it is skipped from the start.
      for (let c = 0; c < samples.length; c++) this.addSamplePeak(samples[c], at, at + count);
      for (let c = 0; c < samples.length; c++)
        this.addChannel(c, samples[c].subarray(at, at + count), count, firstWindow);
      this.frames += count;
      at += count;
      if (this.frames === secondEnd) {
        this.perSecond.push(this.closeSecond());
      }
    }
  }

  finish(): PeakMeasurement {
    const perSecond = [...this.perSecond];
    const truePeak = Math.max(this.truePeak, this.secondPeak);
    if (this.frames % this.sampleRate !== 0) {
      const tail = this.secondSamplePeak > 0 ? this.secondPeak : 0;
      // The part second after the last whole one: a second of its own when rounding the length up, else the last second's tail.
      if (this.frames % this.sampleRate >= this.sampleRate / 2) perSecond.push(tail);
      else if (perSecond.length > 0) perSecond[perSecond.length - 1] = Math.max(perSecond[perSecond.length - 1], tail);
    }
    return { truePeak, samplePeak: this.samplePeak, truePeakPerSecond: perSecond };
  }

  /**
   * The second's peak, 0 when all its samples are 0: digital silence stays silence, though the filter
   * rings into its first samples from the sound before it.
   */
  private closeSecond(): number {
    const peak = this.secondSamplePeak > 0 ? this.secondPeak : 0;
    this.truePeak = Math.max(this.truePeak, this.secondPeak);
    this.secondPeak = 0;
    this.secondSamplePeak = 0;
    return peak;
  }

  private addSamplePeak(samples: Float32Array, from: number, to: number): void {
    let peak = 0;
    for (let i = from; i < to; i++) {
      const v = samples[i] < 0 ? -samples[i] : samples[i];
      if (v > peak) peak = v;
    }
    if (peak > this.samplePeak) this.samplePeak = peak;
    if (peak > this.secondSamplePeak) this.secondSamplePeak = peak;
    if (peak > this.secondPeak) this.secondPeak = peak;
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
      if (max * bound <= this.secondPeak) continue;
      for (let s = Math.max(start, firstWindow); s < start + count; s++) {
        const v = interpolator.intervalPeak(buf, s);
        if (v > this.secondPeak) this.secondPeak = v;
      }
    }
    buf.copyWithin(0, frames, frames + history);
  }
}
