// The shapes the sidebar shows, as the runtime publishes them (src/sidebar/state.ts, result-details.ts)
// and as the engine reports loudness (src/contract/loudness-report.ts). Types only: nothing of the
// runtime reaches the browser script.
export type { LoudnessReport, LoudnessTrack } from '../../contract/loudness-report';
export type {
  InFlightRow,
  OperationState,
  ResultRow,
  ServiceState,
  ServiceStorageState,
  SidebarState,
  StorageRule,
  StorageState,
  StreamRow,
} from '../../sidebar/state';
export type { ResultDetails } from '../../sidebar/result-details';
