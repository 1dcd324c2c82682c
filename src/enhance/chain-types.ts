// What the speech-enhancement chain is asked to do and what it reports: shared by the chain, the
// engine's processor and the benchmarks.

/** The interface's `enhancement_model` (v1: `model_arch`): each names a chain, lightest first. */
export type EnhancementModel = 'FINCH' | 'LARK' | 'LARK_V2';

export interface ChainStages {
  /** RNNoise noise reduction, mixed with the original by the enhancement level. */
  denoise: boolean;
  /** High-pass against rumble. */
  highpass: boolean;
  /** Slow, voice-driven gain rider toward one speech level. */
  leveler: boolean;
  /** Mains hum (50/60 Hz and harmonics) found in the file, removed by narrow notches. */
  humRemoval: boolean;
}

/** FINCH = noise reduction + high-pass; LARK = FINCH + leveler; LARK_V2 = LARK + hum removal. */
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
  /** Strength 1..100: the share of the denoised signal in the output (100 = fully denoised). */
  level: number;
  /** Overrides of the model's stages (benchmarks switch noise reduction off to make a reference). */
  stages?: Partial<ChainStages>;
}
