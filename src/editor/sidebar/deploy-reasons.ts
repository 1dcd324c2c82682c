/// <reference lib="dom" />
// Node-RED's deploy warning ("The workspace contains some nodes that are not properly configured")
// names each invalid node as "[tab] label (type)", not why it is invalid, and offers no hook to say more
// (deploy.js, the same in Node-RED 4 and 5). The reasons are on the node all the same: Node-RED keeps
// its checks' words in node.validationErrors, and ours name the setting, the value and the rule
// (validators.ts). So under each of this package's nodes in that list, the editor plugin writes its
// reasons, when the warning appears.

/** A node as the editor holds it: what the warning's listing and its reasons read. */
export interface EditorNode {
  id: string;
  type: string;
  /** Its tab or subflow. */
  z?: string;
  /** Disabled. */
  d?: boolean;
  valid?: boolean;
  validationErrors?: unknown[];
}

/** The part of the editor's global `RED` this reads. */
export interface RedForDeployWarning {
  nodes: {
    eachConfig(visit: (node: EditorNode) => void): void;
    eachNode(visit: (node: EditorNode) => void): void;
    workspace(id: string): { label?: string; disabled?: boolean } | null | undefined;
    subflow(id: string): { name?: string } | null | undefined;
  };
  utils: { getNodeLabel(node: EditorNode, defaultLabel: string): string };
}

/** The list in Node-RED's deploy warnings (its invalid nodes' and its unknown types'). */
const WARNING_LIST = 'ul.red-ui-deploy-dialog-confirm-list';
/** Our list of a node's reasons, under its entry. */
const REASONS_CLASS = 'me-deploy-reasons';

/** Whether a node type is this package's. */
export function isOwnType(type: string): boolean {
  return type.startsWith('media-enhance-');
}

/** A node as the deploy warning lists it: "[tab] label (type)" (deploy.js, getNodeInfo). */
export function listedAs(red: RedForDeployWarning, node: EditorNode): string {
  let tab = '';
  if (node.z) {
    const workspace = red.nodes.workspace(node.z);
    tab = (workspace ? workspace.label : red.nodes.subflow(node.z)?.name) ?? '';
  }
  return `${tab ? `[${tab}] ` : ''}${red.utils.getNodeLabel(node, node.id)} (${node.type})`;
}

/**
 * The nodes the deploy warning lists, in the order it finds them: config nodes, then the others, each
 * invalid and not disabled (itself, or its tab). Its sort keeps that order among entries that read alike.
 */
export function invalidNodes(red: RedForDeployWarning): EditorNode[] {
  const found: EditorNode[] = [];
  const visit = (node: EditorNode) => {
    const disabled = node.d || (node.z ? red.nodes.workspace(node.z)?.disabled : false);
    if (!node.valid && !disabled) found.push(node);
  };
  red.nodes.eachConfig(visit);
  red.nodes.eachNode(visit);
  return found;
}

/**
 * For each entry of the warning's list, in order, the node it names, or null: the n-th entry reading as
 * some text is the n-th invalid node listed as that text (the sort is stable), and the last entry, "plus
 * N more", names none.
 */
export function nodesOfEntries(
  entries: readonly string[],
  listed: readonly string[],
  nodes: readonly EditorNode[],
): (EditorNode | null)[] {
  const taken = new Set<number>();
  return entries.map((entry) => {
    const index = listed.findIndex((text, i) => text === entry && !taken.has(i));
    if (index === -1) return null;
    taken.add(index);
    return nodes[index];
  });
}

/** Writes under each of our nodes in a deploy warning's list its reasons. */
export function explainList(red: RedForDeployWarning, list: HTMLElement): void {
  if (list.querySelector(`.${REASONS_CLASS}`)) return; // explained already
  const nodes = invalidNodes(red);
  const listed = nodes.map((node) => listedAs(red, node));
  const items = [...list.children].filter((child): child is HTMLElement => child.tagName === 'LI');
  const named = nodesOfEntries(
    items.map((item) => item.textContent ?? ''),
    listed,
    nodes,
  );
  items.forEach((item, i) => {
    const node = named[i];
    const reasons = (node?.validationErrors ?? []).filter((reason): reason is string => typeof reason === 'string');
    if (!node || !isOwnType(node.type) || reasons.length === 0) return;
    const sublist = document.createElement('ul');
    sublist.className = REASONS_CLASS;
    for (const reason of reasons) {
      const line = document.createElement('li');
      line.textContent = reason; // the value is the user's: text, never markup
      sublist.append(line);
    }
    item.append(sublist);
  });
}

/**
 * From now on, explains every deploy warning that Node-RED shows in its notifications area. Node-RED
 * builds the warning whole before adding it, so one look at each added notification finds its list.
 */
export function explainDeployWarnings(red: RedForDeployWarning): void {
  const area = document.getElementById('red-ui-notifications');
  if (!area) return;
  new MutationObserver((records) => {
    for (const record of records)
      for (const added of record.addedNodes)
        if (added instanceof HTMLElement)
          for (const list of added.querySelectorAll<HTMLElement>(WARNING_LIST)) explainList(red, list);
  }).observe(area, { childList: true });
}
