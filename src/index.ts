// The package's main entry: the service client and the local engine, for code users.
export * from './client';
export { startEngine } from './engine';
export type { EngineOptions, EngineHandle, FaultOptions, AccessLogEntry } from './engine';
export type { EndpointId } from './contract/endpoints';
export type {
  EnhanceJsonBody,
  EnhancementSettings,
  Model,
  TranscodeKind,
  Step,
  DownloadStep,
  OutputSettings,
  AppliedOutput,
} from './contract/fields';
export { appliedOutputsOf } from './contract/fields';
export { ENGINE_EXTENSIONS, LOUDNESS_ONLY, SEVERAL_OUTPUTS } from './contract/extensions';
export type { OutputEncodingSettings, AppliedEncoding, BitrateMode, ServiceExtension } from './contract/extensions';
