// The names the live page's HTML (page-html.ts), its script (page-main.ts) and its tests share.

/** The AudioWorkletProcessor's name (voice-worklet.ts registers it, page-main.ts makes a node of it). */
export const PROCESSOR_NAME = 'media-enhance-live-voice';
/** The page's global for tests and diagnosis: `record(seconds)` and the figures' `history`. */
export const PAGE_GLOBAL = 'mediaEnhanceLive';
/** The websocket's path under the page's own: the flow's websocket listener is at the page's path + "/audio". */
export const AUDIO_PATH = 'audio';

/** The ids of the page's elements. */
export const IDS = {
  start: 'start',
  hear: 'hear',
  delay: 'delay',
  parts: 'parts',
  hearing: 'hearing',
  status: 'status',
  problem: 'problem',
  /** The worklet's source, carried by the page in a script element that does not run. */
  worklet: 'media-enhance-voice-worklet',
} as const;
