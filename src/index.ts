// The package's main entry: the service client and the local engine, for code users.
export * from './client';
export { startEngine } from './engine';
export type { EngineOptions, EngineHandle, FaultOptions, AccessLogEntry } from './engine';
export type { EndpointId } from './contract/endpoints';
export type { EnhanceJsonBody, EnhancementSettings, Model, TranscodeKind, Step } from './contract/fields';
export { ENGINE_EXTENSIONS, LOUDNESS_ONLY } from './contract/extensions';
export type { OutputEncodingSettings, BitrateMode, ServiceExtension } from './contract/extensions';
