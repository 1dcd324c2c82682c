// What the editor's "media enhance" sidebar shows: the state answered by `GET /media-enhance/state`
// (behind the package's read permission). Comms carries only a signal that it changed: Node-RED's comms
// send a topic to every connected editor, whatever its user may read, so no content goes that way. The
// shapes are the contract between the runtime (src/sidebar) and the editor script (src/editor/sidebar):
// change both together.
import type { OperationLimitState } from '../client/limit-state';
import type { OpenStreamView } from '../stream/open-streams';

export const STATE_TOPIC = 'media-enhance/state';

/** What STATE_TOPIC carries: the state changed; an editor fetches it through the permission-checked route. */
export interface StateSignal {
  /** Grows with every change sent. */
  version: number;
}

/** At most this many in-flight rows are listed; the rest are counted in `inFlightMore`. */
export const IN_FLIGHT_LISTED = 100;

/** Free text in a row (a name, a stage, an error) is cut to this many characters, so a state stays small. */
export const ROW_TEXT_MAX = 200;

export interface SidebarState {
  /** One per deployed config node, in deploy order. */
  services: ServiceState[];
  /** Oldest first, at most IN_FLIGHT_LISTED. */
  inFlight: InFlightRow[];
  /** Jobs in flight beyond those listed. */
  inFlightMore: number;
  /** Newest first, at most 50. */
  results: ResultRow[];
  /** The live streams open in enhance stream nodes, by node and topic (absent from a runtime without them). */
  streams?: StreamRow[];
  /**
   * The runtime's clock (epoch ms) when this state was sent: every other time in it is on that clock, so
   * an editor on another machine adds the difference to its own before it counts elapsed times.
   */
  sentAt: number;
}

export interface ServiceState {
  /** The config node's id. */
  id: string;
  /** The config node's name, or its label ("built-in engine" / the remote host). */
  name: string;
  kind: 'built-in' | 'remote';
  /** The engine's loopback URL or the remote origin and base; never a key; null before it started. */
  url: string | null;
  sharing: 'off' | 'connecting' | 'shared' | 'unreachable';
  /** Why the service cannot be used (bad setting, no key, engine failed), else null. */
  error: string | null;
  /** One per EndpointId, in ENDPOINT_IDS order; none while the service is not started or cannot be used. */
  operations: OperationState[];
  /** `nextPollAt` in epoch ms. */
  poller: { watching: number; nextPollAt: number | null };
}

/** One operation's limit use, as the service's client holds it. */
export type OperationState = OperationLimitState;

/** The node a job runs in, and the service (config node) it uses. */
export interface JobNode {
  nodeId: string;
  /** The node's name or its type's label. */
  nodeName: string;
  nodeType: string;
  serviceId: string | null;
}

export interface InFlightRow extends JobNode {
  /** Unique per job. */
  id: string;
  /** The media uid once known. */
  uid: string | null;
  /** The node's status text for this job without elapsed ("queued 2nd", "uploading 42%", "processing"). */
  stage: string;
  /** Epoch ms: when set, the editor appends the time since ("processing 1m20s"). */
  stageSince: number | null;
  /** Epoch ms. */
  startedAt: number;
}

/** A live stream of an enhance stream node (src/stream/open-streams.ts). */
export type StreamRow = OpenStreamView;

export interface LoudnessSummary {
  input_lufs: number | null;
  output_lufs: number | null;
  target_lufs: number | null;
  output_true_peak_dbtp: number | null;
}

export interface ResultRow extends JobNode {
  /** The same id as the job's in-flight row. */
  id: string;
  uid: string | null;
  fileName: string | null;
  outcome: 'done' | 'failed';
  /** The MediaEnhanceError code when failed (e.g. 'JOB_FAILED'). */
  errorCode: string | null;
  /** The error's sentence. */
  error: string | null;
  startedAt: number;
  finishedAt: number;
  /** From the media's enhancement_params when known (numbers or null). */
  loudness: LoudnessSummary | null;
  /** Failed after the media was enhanced (its file could not be written): the enhanced file can still be downloaded. */
  enhancedReady?: boolean;
}

/** A built-in engine's retention rule: finished media go once older than maxAgeMs, or oldest first while all take more than maxTotalBytes (null: no such limit), none used within graceMs. */
export interface StorageRule {
  maxAgeMs: number | null;
  maxTotalBytes: number | null;
  graceMs: number;
}

export interface StorageUse {
  /** Media kept, whatever their state. */
  media: number;
  /** Of those, the finished ones: what "remove finished media now" removes. */
  finished: number;
  /** Bytes of the engine's media folder. */
  bytes: number;
  /** ISO time the oldest kept media arrived, or null. */
  oldest: string | null;
}

/** The answer of `GET /media-enhance/storage`: one entry per built-in engine. */
export interface StorageState {
  services: ServiceStorageState[];
}

export interface ServiceStorageState {
  serviceId: string;
  name: string;
  /** null when it could not be read; `error` says why. */
  use: StorageUse | null;
  error: string | null;
  retention: StorageRule;
}
