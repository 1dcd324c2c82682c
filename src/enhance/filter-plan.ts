// What a channel goes through before noise reduction: a high-pass against rumble and, when the file
// has mains hum, the hum's harmonics that stand out subtracted (hum-subtractor, built by channel-task).
// The plan is plain data so it crosses to whichever thread runs a channel; each channel builds its own
// high-pass from it.
import type { WavSource } from '../audio/wav-reader';
import { highPass, type FilterCascade } from './biquad';
import { HumDetector, type HumReport } from './hum-detector';

/** Rumble, handling noise and plosive thumps sit below this; a voice's fundamental rarely does. */
export const HIGH_PASS_HZ = 80;
const HIGH_PASS_ORDER = 4;

export type HumFinding = HumReport;

export interface FilterPlan {
  highPassHz: number | null;
  hum: HumFinding | null;
}

export function planFilters(highpass: boolean, hum: HumFinding | null): FilterPlan {
  return { highPassHz: highpass ? HIGH_PASS_HZ : null, hum };
}

/** Reads the whole file once and says whether, and where, it hums. */
export async function findHum(source: WavSource): Promise<HumFinding> {
  const { sampleRate, channels, frames } = source.layout;
  const detector = new HumDetector(sampleRate, channels, frames);
  for await (const block of source.blocks()) detector.add(block.samples, block.frames);
  return detector.finish();
}

export interface ChannelFilter {
  process(samples: Float32Array, frames: number): void;
}

export function buildChannelFilters(plan: FilterPlan, sampleRate: number): ChannelFilter {
  const stages: FilterCascade[] = [];
  if (plan.highPassHz !== null) stages.push(highPass(sampleRate, plan.highPassHz, HIGH_PASS_ORDER));
  return {
    process(samples, frames) {
      for (const stage of stages) stage.process(samples, frames);
    },
  };
}
