// What the engine did to a media, in words, from its metadata's `enhancement_params`: the speech stages
// the built-in engine reports (src/enhance/report.ts) and the loudness step's gain and limiting. A remote
// service's params name other things or nothing: what is not recognised is left out, never guessed.
import { decibels, signedDecibels, type Translate } from './format';

type Params = Record<string, unknown>;

const isObject = (value: unknown): value is Params =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** The noise reduction's name, and the runtime its network ran on where the engine says (noise_reduction.runtime). */
function engineName(t: Translate, denoise: Params): string {
  const engine = text(denoise.engine) ?? '';
  const runtime =
    denoise.runtime === 'native'
      ? t('sidebar.stages.runtimeNative')
      : denoise.runtime === 'wasm'
        ? t('sidebar.stages.runtimeWasm')
        : null;
  return runtime === null ? engine : t('sidebar.stages.engineOn', { engine, runtime });
}

function speechStages(t: Translate, speech: Params): string[] {
  const lines: string[] = [];
  const model = text(speech.model);
  if (model) lines.push(t('sidebar.stages.model', { model }));
  const highPass = speech.high_pass;
  if (isObject(highPass) && num(highPass.corner_hz) !== null)
    lines.push(t('sidebar.stages.highPass', { hz: Math.round(num(highPass.corner_hz)!) }));
  const hum = speech.hum_removal;
  if (isObject(hum)) {
    // notches_hz: what engines before hum subtraction reported.
    const listed = hum.harmonics_hz ?? hum.notches_hz;
    const harmonics = Array.isArray(listed) ? listed.filter((f) => num(f) !== null) : [];
    lines.push(
      hum.found === true
        ? t('sidebar.stages.humRemoved', {
            mains: num(hum.mains_hz) ?? '?',
            harmonics: harmonics.map((f) => Math.round(f as number)).join(', '),
          })
        : t('sidebar.stages.humNotFound'),
    );
  }
  const denoise = speech.noise_reduction;
  if (isObject(denoise) && 'attenuation_limit_db' in denoise && !('wet_percent' in denoise)) {
    // DeepFilterNet3: the level is a cap on the attenuation, not a share of the denoised signal.
    const limit = num(denoise.attenuation_limit_db);
    const cap =
      limit === null
        ? t('sidebar.stages.attenuationUnlimited')
        : t('sidebar.stages.attenuationLimit', { db: decibels(limit) });
    const reduction = num(denoise.noise_floor_reduction_db);
    lines.push(
      reduction === null
        ? t('sidebar.stages.noiseReductionCapped', { engine: engineName(t, denoise), cap })
        : t('sidebar.stages.noiseReductionCappedFloor', {
            engine: engineName(t, denoise),
            cap,
            reduction: decibels(reduction),
          }),
    );
  } else if (isObject(denoise)) {
    const wet = num(denoise.wet_percent);
    const reduction = num(denoise.noise_floor_reduction_db);
    lines.push(
      reduction === null
        ? t('sidebar.stages.noiseReduction', { engine: engineName(t, denoise), wet: wet ?? '?' })
        : t('sidebar.stages.noiseReductionFloor', {
            engine: engineName(t, denoise),
            wet: wet ?? '?',
            reduction: decibels(reduction),
          }),
    );
  }
  const leveler = speech.leveler;
  if (isObject(leveler))
    lines.push(
      num(leveler.gain_min_db) === null
        ? t('sidebar.stages.levelerNoSpeech')
        : t('sidebar.stages.leveler', {
            min: signedDecibels(num(leveler.gain_min_db)),
            max: signedDecibels(num(leveler.gain_max_db)),
            speech: num(leveler.speech_percent) ?? '?',
          }),
    );
  return lines;
}

export function enhancementStages(t: Translate, params: Params | undefined): string[] {
  if (!params) return [];
  const lines = isObject(params.speech_enhancement) ? speechStages(t, params.speech_enhancement) : [];
  const gain = num(params.gain_db);
  if (gain !== null)
    lines.push(
      t('sidebar.stages.loudness', {
        gain: signedDecibels(gain),
        limiting: decibels(num(params.limiter_reduction_db) ?? 0),
      }),
    );
  else if (text(params.processing) === 'none') lines.push(t('sidebar.stages.unchanged'));
  const note = text(params.note);
  if (note) lines.push(note);
  return lines;
}
