// What the chain did, as the media's `enhancement_params.speech_enhancement` says it to the user.
import type { EnhanceReport } from './chain';
import type { EnhancementModel } from './chain-types';

const round = (value: number, places = 2) => Math.round(value * 10 ** places) / 10 ** places;

export function enhancementParams(model: EnhancementModel, report: EnhanceReport): Record<string, unknown> {
  const { stages } = report;
  const done = [
    stages.highpass && 'high-pass',
    stages.humRemoval && 'hum removal',
    report.dereverb && 'de-reverberation',
    stages.denoise && 'noise reduction',
    stages.leveler && 'leveler',
  ].filter(Boolean);
  return {
    speech_enhancement: {
      model,
      chain: done.join(', '),
      high_pass: report.highPassHz === null ? null : { corner_hz: report.highPassHz },
      hum_removal: !report.hum
        ? null
        : report.hum.mainsHz === null
          ? { found: false, note: 'no mains hum found in the file: nothing removed' }
          : {
              found: true,
              mains_hz: report.hum.mainsHz,
              fundamental_hz: round(report.hum.fundamentalHz!),
              harmonics_hz: report.hum.harmonicsHz.map((f) => round(f, 1)),
              prominence_db: round(report.hum.prominenceDb, 1),
            },
      ...(report.dereverb ? { dereverb: { method: 'WPE', strength_percent: round(report.dereverb * 100, 0) } } : {}),
      noise_reduction: !stages.denoise
        ? null
        : {
            engine: report.noiseReducer,
            runtime: report.runtime,
            ...(report.noiseReducer === 'RNNoise'
              ? { wet_percent: round(report.wet * 100, 0) }
              : { attenuation_limit_db: report.attenuationCapDb === null ? null : round(report.attenuationCapDb, 1) }),
            noise_floor_reduction_db:
              report.noiseFloorReductionDb === null ? null : round(report.noiseFloorReductionDb, 1),
          },
      leveler: !report.leveler
        ? null
        : report.leveler.targetDb === null
          ? { note: 'no speech found: no gain applied' }
          : {
              gain_min_db: round(report.leveler.minGainDb, 1),
              gain_max_db: round(report.leveler.maxGainDb, 1),
              speech_percent: round(report.leveler.speechShare * 100, 0),
            },
      channel_threads: report.threads,
    },
  };
}
