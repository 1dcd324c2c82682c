// The example flows of examples/ as one flows file, each example on a tab of its own, and how npm start
// adds them to a user's flows: a node is added once, the first time it is met, and never again. A node
// the user changed stays theirs; a node they deleted stays deleted; an example new in this version is added.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

export interface FlowNode {
  id: string;
  type: string;
  z?: string;
  [key: string]: unknown;
}

/** Node types that live outside any tab. */
const GLOBAL_TYPES = new Set(['media-enhance-config', 'tab', 'subflow']);
/** Beside flows.json: the ids of every example node ever added to this user dir. */
export const EXAMPLES_STAMP = '.media-enhance-examples.json';

export function exampleFlows(folder: string): FlowNode[] {
  const flows: FlowNode[] = [];
  for (const file of readdirSync(folder)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const label = basename(file, '.json').replace(/^\d+\s+/, '');
    const tab = `me-example-tab-${label.toLowerCase().replace(/\W+/g, '-')}`;
    flows.push({ id: tab, type: 'tab', label, disabled: false, info: '' });
    const nodes = JSON.parse(readFileSync(join(folder, file), 'utf8')) as FlowNode[];
    for (const node of nodes) flows.push(GLOBAL_TYPES.has(node.type) ? node : { ...node, z: tab });
  }
  return flows;
}

/** `existing` with the example nodes it has never had: none already there, none added before. */
export function addNewExamples(
  existing: FlowNode[],
  examples: FlowNode[],
  addedBefore: ReadonlySet<string>,
): { flows: FlowNode[]; added: FlowNode[] } {
  const taken = new Set([...existing.map((node) => node.id), ...addedBefore]);
  const added: FlowNode[] = [];
  for (const node of examples) {
    if (taken.has(node.id)) continue; // also the config node every example file carries: added once
    taken.add(node.id);
    added.push(node);
  }
  return { flows: [...existing, ...added], added };
}

/**
 * Adds to `userDir`'s flows.json the examples it has never had, remembers them in the stamp file, and
 * returns one line per thing added, for the log. A user dir made before the stamp existed counts the
 * example nodes its flows hold as added before.
 */
export function deployExamples(userDir: string, examplesFolder: string): string[] {
  const flowFile = join(userDir, 'flows.json');
  const stampFile = join(userDir, EXAMPLES_STAMP);
  const existing = existsSync(flowFile) ? (JSON.parse(readFileSync(flowFile, 'utf8')) as FlowNode[]) : [];
  const addedBefore = new Set<string>(
    existsSync(stampFile)
      ? (JSON.parse(readFileSync(stampFile, 'utf8')) as { added: string[] }).added
      : existing.map((node) => node.id),
  );
  const examples = exampleFlows(examplesFolder);
  const { flows, added } = addNewExamples(existing, examples, addedBefore);
  if (added.length > 0) writeFileSync(flowFile, `${JSON.stringify(flows, null, 2)}\n`);
  // Written after the flows: if this stops in between, the nodes are in flows.json and are not added twice.
  const addedNow = new Set(added.map((node) => node.id));
  const remembered = new Set(examples.map((node) => node.id).filter((id) => addedBefore.has(id) || addedNow.has(id)));
  writeFileSync(stampFile, `${JSON.stringify({ added: [...remembered] }, null, 2)}\n`);
  return describeAdded(added);
}

function describeAdded(added: FlowNode[]): string[] {
  const lines: string[] = [];
  for (const tab of added.filter((node) => node.type === 'tab')) {
    lines.push(
      `added the example "${tab.label as string}" (${added.filter((node) => node.z === tab.id).length} nodes) on a tab of its own`,
    );
  }
  const onOldTabs = added.filter(
    (node) => node.type !== 'tab' && node.z !== undefined && !added.some((tab) => tab.id === node.z),
  );
  if (onOldTabs.length > 0)
    lines.push(`added ${onOldTabs.length} example node(s) new in this version to example tabs you have`);
  for (const config of added.filter((node) => node.z === undefined && node.type !== 'tab'))
    lines.push(`added the config node "${(config.name as string) || config.id}" the examples use`);
  return lines;
}
