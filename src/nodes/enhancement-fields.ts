// The enhancement settings each media node offers, by the request member they fill. The same members are what
// msg.enhancement may override, so the help, the editor and the runtime agree on one list.
import type { EnhancementField } from './enhancement';

const TARGET = { label: 'target loudness (LUFS)', numeric: true } as const;
const PEAK = { label: 'peak limit (dBTP)', numeric: true } as const;

/** enhance audio (v1 JSON): every member is required by the service; "keep" format is null. */
export const AUDIO_FIELDS: readonly EnhancementField[] = [
  { member: 'loudness_target_level', prop: 'loudnessTarget', ...TARGET },
  { member: 'loudness_peak_limit', prop: 'peakLimit', ...PEAK },
  { member: 'enhancement_level', prop: 'enhancementLevel', label: 'enhancement level (0-1)', numeric: true },
  { member: 'transcode_kind', prop: 'transcode', label: 'output format', whenEmpty: null },
  { member: 'model_arch', prop: 'model', label: 'model' },
];

/** enhance video (v1 multipart `video_enhancement`): empty settings take the service's defaults. */
export const VIDEO_FIELDS: readonly EnhancementField[] = [
  { member: 'loudness_target', prop: 'loudnessTarget', ...TARGET },
  { member: 'true_peak', prop: 'truePeak', ...PEAK },
  { member: 'enhancement_level', prop: 'enhancementLevel', label: 'enhancement level (1-100)', numeric: true },
  { member: 'enhancement_model', prop: 'model', label: 'model' },
];

/** upload (v2 `media_enhancement`): the video settings plus the output format. */
export const UPLOAD_FIELDS: readonly EnhancementField[] = [
  ...VIDEO_FIELDS,
  { member: 'transcode', prop: 'transcode', label: 'output format' },
];
