// The example flows of examples/ as one flows file: each example on a tab of its own, merged by node
// id into flows already there, so deploying them twice changes nothing.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

export interface FlowNode {
  id: string;
  type: string;
  z?: string;
  [key: string]: unknown;
}

/** Node types that live outside any tab. */
const GLOBAL_TYPES = new Set(['media-enhance-config', 'tab', 'subflow']);

export function exampleFlows(folder: string): FlowNode[] {
  const flows: FlowNode[] = [];
  for (const file of readdirSync(folder).filter((f) => f.endsWith('.json')).sort()) {
    const label = basename(file, '.json').replace(/^\d+\s+/, '');
    const tab = `me-example-tab-${label.toLowerCase().replace(/\W+/g, '-')}`;
    flows.push({ id: tab, type: 'tab', label, disabled: false, info: '' });
    const nodes = JSON.parse(readFileSync(join(folder, file), 'utf8')) as FlowNode[];
    for (const node of nodes) flows.push(GLOBAL_TYPES.has(node.type) ? node : { ...node, z: tab });
  }
  return flows;
}

/** `existing` with every node of `additions` put in, replacing a node of the same id. */
export function mergeFlows(existing: FlowNode[], additions: FlowNode[]): FlowNode[] {
  const merged = new Map(existing.map((node) => [node.id, node]));
  for (const node of additions) merged.set(node.id, node);
  return [...merged.values()];
}
