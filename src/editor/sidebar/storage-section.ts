/// <reference lib="dom" />
// The tab's storage section: each service's disk use, fetched when the results change, and its button
// that removes the finished media after the user confirms.
import { adminJson, adminPost } from './admin-fetch';
import { bytesText, type Translate } from './format';
import { escapeHtml } from './markup';
import { oneAtATime } from './one-fetch-at-a-time';
import type { RedForSidebar } from './red-for-sidebar';
import { renderStorage } from './render-storage';
import type { StorageState } from './shapes';

export function storageSection(element: HTMLElement, red: RedForSidebar, t: Translate): { refresh(): Promise<void> } {
  let storage: StorageState = { services: [] };
  const refresh = oneAtATime(async () => {
    try {
      storage = await adminJson<StorageState>(red, 'media-enhance/storage');
      element.innerHTML = renderStorage(t, storage, Date.now());
    } catch {
      // The state's own refresh tells a user who may not read; a storage block that stays is enough.
    }
  });
  const removeFinished = async () => {
    try {
      const response = await adminPost(red, 'media-enhance/storage/remove');
      const removed = (await response.json()) as { removed: number; bytes: number };
      red.notify(t('sidebar.storage.removed', { count: removed.removed, bytes: bytesText(removed.bytes) }), {
        type: 'success',
      });
    } catch (err) {
      red.notify(t('sidebar.storage.removeFailed', { reason: (err as Error).message }), { type: 'error' });
    }
    await refresh();
  };
  const confirmRemove = () => {
    const count = storage.services.reduce((sum, entry) => sum + (entry.use?.finished ?? 0), 0);
    const asked = red.notify(escapeHtml(t('sidebar.storage.confirm', { count })), {
      modal: true,
      fixed: true,
      type: 'warning',
      buttons: [
        { text: escapeHtml(t('sidebar.storage.cancel')), click: () => asked?.close() },
        {
          text: escapeHtml(t('sidebar.storage.confirmRemove')),
          class: 'primary me-storage-confirm',
          click: () => {
            asked?.close();
            void removeFinished();
          },
        },
      ],
    });
  };
  element.addEventListener('click', (event) => {
    if ((event.target as HTMLElement).closest('.me-storage-remove')) confirmRemove();
  });
  return { refresh };
}
