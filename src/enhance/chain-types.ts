// What the speech-enhancement chain is asked to do and what it reports: shared by the chain, the
// engine's processor and the benchmarks.

import type { Model } from '../contract/fields';

/** The interface's `enhancement_model` (v1: `model_arch`), as the contract names them: each names a chain, lightest first. */
export type EnhancementModel = Model;

/** The noise reduction a chain runs: RNNoise (fast) or DeepFilterNet3 (the better, four times slower). */
export type NoiseReducer = 'RNNoise' | 'DeepFilterNet3';

/** FINCH runs RNNoise; LARK and LARK_V2 run DeepFilterNet3. */
export function noiseReducerOf(model: EnhancementModel): NoiseReducer {
  return model === 'FINCH' ? 'RNNoise' : 'DeepFilterNet3';
}

/**
 * DeepFilterNet3's attenuation cap at an enhancement level: none at 100, else 0.4 dB per level point
 * (75: 30 dB, 50: 20 dB, 25: 10 dB, 1: 0.4 dB). Noise is pulled down by at most that much.
 */
export function attenuationCapDb(level: number): number {
  return level >= 100 ? Infinity : 0.4 * Math.max(0, level);
}

export interface ChainStages {
  /** Noise reduction (the model's NoiseReducer), as strong as the enhancement level says. */
  denoise: boolean;
  /** High-pass against rumble. */
  highpass: boolean;
  /** Slow, voice-driven gain rider toward one speech level. */
  leveler: boolean;
  /** Mains hum (50/60 Hz and harmonics) found in the file, fitted and subtracted. */
  humRemoval: boolean;
}

/**
 * FINCH = high-pass + RNNoise; LARK = high-pass + DeepFilterNet3 + leveler; LARK_V2 = LARK + hum
 * removal.
 */
export function stagesOf(model: EnhancementModel): ChainStages {
  return {
    denoise: true,
    highpass: true,
    leveler: model === 'LARK' || model === 'LARK_V2',
    humRemoval: model === 'LARK_V2',
  };
}

export interface EnhanceOptions {
  model: EnhancementModel;
  /**
   * Strength 1..100. RNNoise: the share of the denoised signal in the output (100 = fully denoised);
   * DeepFilterNet3: the cap on how far noise is pulled down (attenuationCapDb; 100 = no cap).
   */
  level: number;
  /** De-reverberation (WPE) before noise reduction, its strength 0..1; 0 or undefined: none. */
  dereverb?: number;
  /** Overrides the model's noise reduction (benchmarks compare the two on one chain). */
  noiseReducer?: NoiseReducer;
  /** Overrides of the model's stages (benchmarks switch noise reduction off to make a reference). */
  stages?: Partial<ChainStages>;
}
