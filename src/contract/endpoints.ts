// The five operations of the service interface, their paths and their rate limits
// (docs/interface.md#operations, docs/interface.md#rate-limits).

export type EndpointId = 'enhanceAudio' | 'enhanceVideo' | 'uploadMedia' | 'getMetadata' | 'downloadFile';

export const ENDPOINT_IDS: readonly EndpointId[] = [
  'enhanceAudio',
  'enhanceVideo',
  'uploadMedia',
  'getMetadata',
  'downloadFile',
];

/** Requests per window; null means the interface sets no limit (the v1 operations). */
export const DEFAULT_RATE_LIMITS: Readonly<Record<EndpointId, number | null>> = {
  enhanceAudio: null,
  enhanceVideo: null,
  uploadMedia: 10,
  getMetadata: 120,
  downloadFile: 60,
};

export const DEFAULT_WINDOW_MS = 60_000;

export const PATHS = {
  enhanceAudio: '/v1/media/enhance-json',
  enhanceVideo: '/v1/videos',
  uploadMedia: '/v2/medias',
  metadata: (uid: string) => `/v2/medias/${encodeURIComponent(uid)}/metadata`,
  file: (uid: string) => `/v2/medias/${encodeURIComponent(uid)}/file`,
} as const;

/** Sent on every answer of a rate-limited operation (docs/interface.md#headers). */
export const RATE_LIMIT_HEADERS = {
  limit: 'x-ratelimit-limit',
  remaining: 'x-ratelimit-remaining',
  used: 'x-ratelimit-used',
  window: 'x-ratelimit-window',
} as const;

/** States the engine uses (docs/interface.md#media-states). COMPLETED and FAILED are terminal. */
export const MEDIA_STATES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;
export type MediaState = (typeof MEDIA_STATES)[number];
