// The built-in engines' disk use as the sidebar's storage block shows it, and the removal of their
// finished media that its button asks for. A remote service's storage is the service's own business.
import type { SidebarRegistry } from './registry';
import type { StorageState } from './state';

export async function storageState(registry: SidebarRegistry): Promise<StorageState> {
  const services = await Promise.all(
    registry.storages().map(async ({ serviceId, name, storage }) => {
      const { maxAgeMs, maxTotalBytes, graceMs } = storage.retention;
      const retention = { maxAgeMs, maxTotalBytes, graceMs };
      try {
        return { serviceId, name, use: await storage.use(), error: null, retention };
      } catch (err) {
        return { serviceId, name, use: null, error: (err as Error).message, retention };
      }
    }),
  );
  return { services };
}

/**
 * Removes every built-in engine's finished media now, but never a media a job of this Node-RED still
 * works on (a download after its wait would find it gone).
 */
export async function removeFinishedMedia(registry: SidebarRegistry): Promise<{ removed: number; bytes: number }> {
  const keep = registry.mediaInFlight();
  let removed = 0;
  let bytes = 0;
  for (const { storage } of registry.storages()) {
    const done = await storage.removeFinished(keep);
    removed += done.removed;
    bytes += done.bytes;
  }
  return { removed, bytes };
}
