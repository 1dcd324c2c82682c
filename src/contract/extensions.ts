// Extensions: what a service may take beyond the interface (docs/interface.md#loudness-only).
// The built-in engine declares the ones it implements; a client is told which ones its service declares
// (ClientOptions.extensions) and refuses a member or value of any other before sending, naming it, since
// a service that does not know it would refuse it, or worse, ignore it.

/** `enhancement_model: "LOUDNESS_ONLY"`: loudness normalisation and the true-peak limiter, no speech enhancement. */
export const LOUDNESS_ONLY = 'loudness-only';

export type ServiceExtension = typeof LOUDNESS_ONLY;

/** What the built-in engine implements. */
export const ENGINE_EXTENSIONS: readonly ServiceExtension[] = [LOUDNESS_ONLY];

/** The model value of the loudness-only extension. */
export const LOUDNESS_ONLY_MODEL = 'LOUDNESS_ONLY';

/** The `enhancement_model` values beyond the interface's, by the extension they belong to. */
export const EXTENSION_MODELS = new Map<string, ServiceExtension>([[LOUDNESS_ONLY_MODEL, LOUDNESS_ONLY]]);
