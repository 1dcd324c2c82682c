// The package's main entry: the service client for code users. Node-RED loads the nodes from nodes/.
export * from './client';
export type { EndpointId } from './contract/endpoints';
export type { EnhanceJsonBody, EnhancementSettings, Model, TranscodeKind, Step } from './contract/fields';
