// The download node's switches as the runtime reads a node saved without them; the editor offers the same
// defaults (src/editor/editor-values.ts), so a new node and an old flow behave alike.
export const DOWNLOAD_SWITCH_DEFAULTS = {
  /** Attach the media's loudness report as msg.loudness. */
  attachLoudness: false,
} as const;
