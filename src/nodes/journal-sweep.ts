// Drops the kept messages of nodes that are no longer in the deployed flows (deleted, or moved to
// another service), after every start and deploy, with a log line naming each media. A disabled flow
// still holds its nodes, so their messages stay until it is enabled again. Folders are compared by
// their encoded names (id-segment.ts), the ones earlier versions gave included, so no node loses its
// journal to a name it does not recognise.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { idSegment, legacySegment } from './id-segment';
import {
  KEPT_FOLDER,
  MessageJournal,
  describeEntry,
  journalRoot,
  keptMessageMaxBytes,
  type JournalPlace,
} from './message-journal';
import type { RedApi } from './red';
import { translator } from './texts';

/** The sweep listening on each runtime: a second registration of the nodes (as tests do) replaces it. */
const listeners = new WeakMap<object, () => void>();

/** Journal folders of the nodes running now (a node inside a subflow runs under an id the flows do not list). */
const running = new Map<string, number>();
/** The download folders of each journal's node, as its settings said when it last ran in this process. */
const partFoldersOfJournal = new Map<string, readonly string[]>();

/**
 * Notes a node's journal while the node runs, with the folders its downloads write to: after the node is
 * deleted, the sweep removes its part files only from those. Answers the call that ends the note.
 */
export function noteRunningJournal(folder: string, partFolders: readonly string[]): () => void {
  running.set(folder, (running.get(folder) ?? 0) + 1);
  partFoldersOfJournal.set(folder, partFolders);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    const count = (running.get(folder) ?? 1) - 1;
    if (count > 0) running.set(folder, count);
    else running.delete(folder);
  };
}

export function sweepJournalsAfterEachDeploy(RED: RedApi): void {
  const previous = listeners.get(RED.events);
  if (previous) RED.events.removeListener('flows:started', previous);
  const sweep = () => void dropMessagesOfDeletedNodes(RED);
  listeners.set(RED.events, sweep);
  RED.events.on('flows:started', sweep);
}

/** Both names a folder of `id` may have: its own, and the one an earlier version gave it (not yet moved). */
function folderNames(id: string): string[] {
  return [idSegment(id), legacySegment(id)];
}

async function dropMessagesOfDeletedNodes(RED: RedApi): Promise<void> {
  const t = translator(RED);
  // Per folder name of a deployed node, the folder names of its service.
  const servicesOfNode = new Map<string, Set<string>>();
  RED.nodes.eachNode((def) => {
    if (typeof def.service !== 'string') return;
    for (const name of folderNames(def.id)) {
      const services = servicesOfNode.get(name) ?? new Set<string>();
      for (const service of folderNames(def.service)) services.add(service);
      servicesOfNode.set(name, services);
    }
  });
  const root = journalRoot(RED.settings);
  const maxMessageBytes = keptMessageMaxBytes(RED.settings);
  for (const configName of await listFolder(root)) {
    const keptDir = join(root, configName, KEPT_FOLDER);
    for (const nodeName of await listFolder(keptDir)) {
      const folder = join(keptDir, nodeName);
      if (servicesOfNode.get(nodeName)?.has(configName) || running.has(folder)) continue;
      const why = servicesOfNode.has(nodeName)
        ? t('media-enhance.sweep.movedService')
        : t('media-enhance.sweep.deleted');
      try {
        const place: JournalPlace = { root, partFolders: partFoldersOfJournal.get(folder) ?? [], maxMessageBytes };
        for (const entry of await new MessageJournal(folder, place).discard())
          RED.log.warn(t('media-enhance.sweep.dropped', { what: describeEntry(t, entry), node: nodeName, why }));
        partFoldersOfJournal.delete(folder);
      } catch (err) {
        RED.log.warn(t('media-enhance.sweep.cannotRemove', { node: nodeName, why, error: (err as Error).message }));
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
