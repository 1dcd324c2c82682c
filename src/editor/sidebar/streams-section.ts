/// <reference lib="dom" />
// The tab's live-streams section, shown only while a stream is open: most flows have none, and the
// results then stay on the first screen.
import type { Translate } from './format';
import { renderStreams } from './render-streams';
import type { StreamRow } from './shapes';

export function streamsSection(element: HTMLElement, t: Translate): { render(rows: StreamRow[], now: number): void } {
  return {
    render(rows, now) {
      element.innerHTML = renderStreams(t, rows, now);
      element.parentElement!.hidden = rows.length === 0;
    },
  };
}
