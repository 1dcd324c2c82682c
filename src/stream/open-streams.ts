// Every live stream open in this Node-RED, by node, for the sidebar's list: what a person watching wants
// to know of each (its node and topic, format, model, latency, how fast it runs, how long its chunks
// wait, the memory it holds, and whether its state had to start afresh).

export interface OpenStreamView {
  nodeId: string;
  nodeName: string;
  /** msg.topic, or '' for the node's one default stream. */
  topic: string;
  rate: number;
  channels: number;
  encoding: string;
  model: string;
  latencyMs: number | null;
  /** Processing time over audio time, on its thread (under 1: faster than real time). */
  realtimeFactor: number | null;
  /** How long its chunks waiting for its thread take to clear (by the model's measured speed), in ms. */
  waitMs: number;
  /** Bytes it holds: its state on its thread and its chunks on their way there. */
  memoryBytes: number;
  /** Streams its thread holds (this one among them), as the thread last said. */
  threadStreams: number;
  /** Times its state started afresh because its output turned non-finite. */
  resets: number;
  chunks: number;
  /** When the stream started (ms since the epoch). */
  since: number;
}

const byNode = new Map<string, () => OpenStreamView[]>();

/** A node tells how to list its streams; the returned function stops it (the node closes). */
export function listStreamsOf(nodeId: string, list: () => OpenStreamView[]): () => void {
  byNode.set(nodeId, list);
  return () => {
    if (byNode.get(nodeId) === list) byNode.delete(nodeId);
  };
}

export function openStreams(): OpenStreamView[] {
  return [...byNode.values()].flatMap((list) => list());
}
