/// <reference lib="dom" />
// The tab's results section: the list, rendered again only when it changed; a row opens its detail view
// (a click, Enter or Space); the toolbar's trash button clears the list on the runtime.
import { adminPost } from './admin-fetch';
import type { Translate } from './format';
import type { RedForSidebar } from './red-for-sidebar';
import { renderResults } from './render-jobs';
import type { ResultRow } from './shapes';

export interface ResultsSection {
  /** Shows `rows`; answers whether the list changed (a media finished, or the list was cleared). */
  render(rows: ResultRow[]): boolean;
  /** Asks the runtime to clear the list; the emptied list comes with the next state. */
  clear(): Promise<void>;
}

export function resultsSection(
  element: HTMLElement,
  red: RedForSidebar,
  t: Translate,
  on: { open(id: string): void; cleared(): void },
): ResultsSection {
  let shown = '';
  const openFrom = (target: EventTarget | null) => {
    const row = (target as HTMLElement | null)?.closest<HTMLElement>('.me-result-row');
    if (row?.dataset.resultId) on.open(row.dataset.resultId);
  };
  element.addEventListener('click', (event) => openFrom(event.target));
  element.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      openFrom(event.target);
    }
  });
  return {
    render(rows) {
      const html = renderResults(t, rows);
      if (html === shown) return false;
      element.innerHTML = shown = html;
      return true;
    },
    async clear() {
      try {
        await adminPost(red, 'media-enhance/results/clear');
        on.cleared();
      } catch (err) {
        red.notify(t('sidebar.results.clearFailed', { reason: (err as Error).message }), { type: 'error' });
      }
    },
  };
}
