// Drops the kept waits of wait nodes that are no longer in the deployed flows (deleted, or moved to
// another service), after every start and deploy, with a log line naming each media. A disabled flow
// still holds its nodes, so its waits stay until it is enabled again.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { RedApi } from './red';
import { WaitJournal, journalRoot } from './wait-journal';

export async function dropWaitsOfDeletedNodes(RED: RedApi, waitType: string): Promise<void> {
  const serviceOfWaitNode = new Map<string, unknown>();
  RED.nodes.eachNode((def) => {
    if (def.type === waitType) serviceOfWaitNode.set(def.id, def.service);
  });
  const root = journalRoot(RED.settings);
  for (const configId of await listFolder(root)) {
    const waitsDir = join(root, configId, 'waits');
    for (const nodeId of await listFolder(waitsDir)) {
      if (serviceOfWaitNode.get(nodeId) === configId) continue;
      try {
        const uids = await new WaitJournal(join(waitsDir, nodeId)).discard();
        const why = serviceOfWaitNode.has(nodeId) ? 'now uses another service' : 'was deleted from the flows';
        for (const uid of uids) RED.log.warn(`media enhance: no longer waiting for media ${uid}: its wait node ${nodeId} ${why}`);
      } catch (err) {
        RED.log.warn(`media enhance: the kept waits of the deleted wait node ${nodeId} could not be removed: ${(err as Error).message}`);
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
