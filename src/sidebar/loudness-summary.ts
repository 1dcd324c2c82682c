// The few loudness figures a result row shows, read from the media's enhancement_params (the engine
// writes them there; a remote service may write none, or other names: those show as unknown).
import type { MediaMetadata } from '../client/types';
import type { LoudnessSummary } from './state';

export function loudnessSummary(metadata: MediaMetadata | undefined): LoudnessSummary | null {
  const params = metadata?.enhancement_params;
  if (!params || typeof params !== 'object') return null;
  const figure = (key: string): number | null => {
    const value = params[key];
    return typeof value === 'number' && Number.isFinite(value) ? value : null;
  };
  const summary: LoudnessSummary = {
    input_lufs: figure('input_loudness_lufs'),
    output_lufs: figure('output_loudness_lufs'),
    target_lufs: figure('loudness_target'),
    output_true_peak_dbtp: figure('output_true_peak_dbtp'),
  };
  return Object.values(summary).some((value) => value !== null) ? summary : null;
}
