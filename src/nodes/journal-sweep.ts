// Drops the kept messages of nodes that are no longer in the deployed flows (deleted, or moved to
// another service), after every start and deploy, with a log line naming each media. A disabled flow
// still holds its nodes, so their messages stay until it is enabled again.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { KEPT_FOLDER, MessageJournal, describeEntry, journalRoot } from './message-journal';
import type { RedApi } from './red';
import { translator } from './texts';

/** The sweep listening on each runtime: a second registration of the nodes (as tests do) replaces it. */
const listeners = new WeakMap<object, () => void>();

export function sweepJournalsAfterEachDeploy(RED: RedApi): void {
  const previous = listeners.get(RED.events);
  if (previous) RED.events.removeListener('flows:started', previous);
  const sweep = () => void dropMessagesOfDeletedNodes(RED);
  listeners.set(RED.events, sweep);
  RED.events.on('flows:started', sweep);
}

async function dropMessagesOfDeletedNodes(RED: RedApi): Promise<void> {
  const t = translator(RED);
  const serviceOfNode = new Map<string, unknown>();
  RED.nodes.eachNode((def) => serviceOfNode.set(def.id, def.service));
  const root = journalRoot(RED.settings);
  for (const configId of await listFolder(root)) {
    const keptDir = join(root, configId, KEPT_FOLDER);
    for (const nodeId of await listFolder(keptDir)) {
      // A node inside a subflow instance runs under an id of its own that the flows do not list.
      if (serviceOfNode.get(nodeId) === configId || RED.nodes.getNode(nodeId)) continue;
      const why = serviceOfNode.has(nodeId) ? t('media-enhance.sweep.movedService') : t('media-enhance.sweep.deleted');
      try {
        for (const entry of await new MessageJournal(join(keptDir, nodeId)).discard())
          RED.log.warn(t('media-enhance.sweep.dropped', { what: describeEntry(t, entry), node: nodeId, why }));
      } catch (err) {
        RED.log.warn(t('media-enhance.sweep.cannotRemove', { node: nodeId, why, error: (err as Error).message }));
      }
    }
  }
}

async function listFolder(folder: string): Promise<string[]> {
  try {
    return await fsp.readdir(folder);
  } catch {
    return [];
  }
}
