// Shapes of what the service returns (docs/interface.md#responses). Unknown fields are kept, never rejected.

/** v2 media metadata: at least `uid` and `enhancement_status`. */
export interface MediaMetadata {
  uid: string;
  enhancement_status: string;
  file_name?: string;
  enhancement_params?: Record<string, unknown>;
  inserted_at?: string;
  updated_at?: string;
  /** Present when the media ended FAILED. */
  error?: { code?: string; message?: string };
  [field: string]: unknown;
}

/** v1 video record. Its `uid` is a media uid on the local engine (unverified elsewhere). */
export interface VideoRecord extends MediaMetadata {
  file_name: string;
  inserted_at: string;
  updated_at: string;
  enhancement_level: number;
  enhancement_model: string;
  enhancement_params: Record<string, unknown>;
}

/** v1 audio answer. `generated_name` is a media uid on the local engine (unverified elsewhere). */
export interface EnhanceAudioResult {
  generated_name: string;
  [field: string]: unknown;
}

/** Reports bytes moved; `total` is undefined when the size is not known in advance. */
export type ProgressCallback = (done: number, total: number | undefined) => void;
