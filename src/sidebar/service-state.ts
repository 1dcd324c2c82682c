// One service as the sidebar shows it: the config node's name and kind, and its client's limits,
// queue, waits and poller at this moment.
import type { MediaEnhanceClient } from '../client/client';
import type { ServiceState, StorageRule, StorageUse } from './state';

/** A built-in engine's media on disk, as its config node hands it to the sidebar. */
export interface ServiceStorage {
  use(): Promise<StorageUse>;
  /** Removes the finished media now, except those in `keep`. */
  removeFinished(keep: ReadonlySet<string>): Promise<{ removed: number; bytes: number }>;
  retention: StorageRule;
}

export interface ServiceEntry {
  id: string;
  name: string;
  kind: 'built-in' | 'remote';
  url: string | null;
  error: string | null;
  /** null until the service started, or when it cannot be used. */
  client: MediaEnhanceClient | null;
  /** The built-in engine's storage once started; null for a remote service. */
  storage: ServiceStorage | null;
}

export function describeService(entry: ServiceEntry): ServiceState {
  const { id, name, kind, url, error, client } = entry;
  // Nothing to count before the service started, or when it cannot be used: the error says why.
  if (!client)
    return { id, name, kind, url, error, sharing: 'off', operations: [], poller: { watching: 0, nextPollAt: null } };
  const { operations, poller } = client.limitState();
  return { id, name, kind, url, error, sharing: client.sharingState(), operations, poller };
}
