// The enhancement settings each media node offers, by the request member they fill. The same members are
// what msg.enhancement may override, so the help, the editor and the runtime agree on one list. Labels are
// keys of the message catalogs (texts.ts).
import { DEREVERB_STRENGTH } from '../contract/extensions';
import type { EnhancementField } from './enhancement';

const TARGET = { label: 'media-enhance.setting.loudnessTarget', numeric: true } as const;
const PEAK = { label: 'media-enhance.setting.peakLimit', numeric: true } as const;
const LEVEL = { prop: 'enhancementLevel', numeric: true } as const;
const MODEL = { prop: 'model', label: 'media-enhance.setting.model' } as const;

/** enhance audio (v1 JSON): every member is required by the service; "keep" format is null. */
export const AUDIO_FIELDS: readonly EnhancementField[] = [
  { member: 'loudness_target_level', prop: 'loudnessTarget', ...TARGET },
  { member: 'loudness_peak_limit', prop: 'peakLimit', ...PEAK },
  { member: 'enhancement_level', ...LEVEL, label: 'media-enhance.setting.enhancementLevelFraction' },
  { member: 'transcode_kind', prop: 'transcode', label: 'media-enhance.setting.outputFormat', whenEmpty: null },
  { member: 'model_arch', ...MODEL },
];

/** enhance video (v1 multipart `video_enhancement`): empty settings take the service's defaults. */
export const VIDEO_FIELDS: readonly EnhancementField[] = [
  { member: 'loudness_target', prop: 'loudnessTarget', ...TARGET },
  { member: 'true_peak', prop: 'truePeak', ...PEAK },
  { member: 'enhancement_level', ...LEVEL, label: 'media-enhance.setting.enhancementLevelPercent' },
  { member: 'enhancement_model', ...MODEL },
];

/**
 * upload (v2 `media_enhancement`): the video settings plus the output format, a lossy output's encoding
 * (the built-in engine's output-encoding extension; empty keeps the input's), the trim of pauses and the
 * de-reverberation (its trim-pauses and dereverb extensions).
 */
export const UPLOAD_FIELDS: readonly EnhancementField[] = [
  ...VIDEO_FIELDS,
  { member: 'transcode', prop: 'transcode', label: 'media-enhance.setting.outputFormat' },
  { member: 'bitrate_kbps', prop: 'bitrate', label: 'media-enhance.setting.bitrate', numeric: true },
  { member: 'bitrate_mode', prop: 'bitrateMode', label: 'media-enhance.setting.bitrateMode' },
  { member: 'sample_rate_hz', prop: 'sampleRate', label: 'media-enhance.setting.sampleRate', numeric: true },
  { member: 'downmix_mono', prop: 'downmixMono', label: 'media-enhance.setting.downmixMono', falseIsEmpty: true },
  { member: 'trim_pauses_s', prop: 'trimPauses', label: 'media-enhance.setting.trimPauses', numeric: true },
  // Ticked: room echo taken away at full strength (msg.enhancement.dereverb may give another, 0 to 100).
  {
    member: 'dereverb',
    prop: 'dereverb',
    label: 'media-enhance.setting.dereverb',
    falseIsEmpty: true,
    trueIs: DEREVERB_STRENGTH.max,
  },
];
