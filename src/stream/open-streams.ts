// Every live stream open in this Node-RED, by node, for the sidebar's list: what a person watching wants
// to know of each (its node and topic, format, model, latency, how fast it runs and how far behind it is).

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
  /** Audio waiting for the stream's thread, in ms. */
  behindMs: number;
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
