// The shapes the sidebar shows, as the runtime publishes them (shapes.md sections 1 and 2).
// Stand-in until the loudness report and the sidebar state land; then this file re-exports theirs.
import type { EndpointId } from '../../contract/endpoints';

export interface LoudnessTrack {
  integrated_lufs: number | null;
  true_peak_dbtp: number | null;
  loudness_range_lu: number | null;
  duration_s: number;
  short_term_lufs: (number | null)[];
  true_peak_per_second_dbtp: (number | null)[];
}
export interface LoudnessReport {
  uid: string;
  interval_s: 1;
  target_lufs: number;
  true_peak_limit_dbtp: number;
  input: LoudnessTrack;
  output: LoudnessTrack;
}
export interface SidebarState {
  services: ServiceState[];
  inFlight: InFlightRow[];
  results: ResultRow[];
}
export interface ServiceState {
  id: string;
  name: string;
  kind: 'built-in' | 'remote';
  url: string | null;
  sharing: 'off' | 'connecting' | 'shared' | 'unreachable';
  error: string | null;
  operations: OperationState[];
  poller: { watching: number; nextPollAt: number | null };
}
export interface OperationState {
  id: EndpointId;
  used: number;
  limit: number | null;
  windowMs: number;
  queued: number;
  rateLimitedUntil: number | null;
  tooManyRequests: number;
}
export interface InFlightRow {
  id: string;
  nodeId: string;
  nodeName: string;
  nodeType: string;
  serviceId: string | null;
  uid: string | null;
  stage: string;
  stageSince: number | null;
  startedAt: number;
}
export interface ResultRow {
  id: string;
  nodeId: string;
  nodeName: string;
  nodeType: string;
  serviceId: string | null;
  uid: string | null;
  fileName: string | null;
  outcome: 'done' | 'failed';
  errorCode: string | null;
  error: string | null;
  startedAt: number;
  finishedAt: number;
  loudness: {
    input_lufs: number | null;
    output_lufs: number | null;
    target_lufs: number | null;
    output_true_peak_dbtp: number | null;
  } | null;
}
