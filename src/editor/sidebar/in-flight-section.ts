/// <reference lib="dom" />
// The tab's in-flight section: rendered with each state, and between two states only its times move,
// changed in place so that a tooltip or a selection in the list stays (a rebuilt row would drop it every second).
import { duration, type Translate } from './format';
import { renderInFlight, stageText } from './render-jobs';
import type { InFlightRow } from './shapes';

export function inFlightSection(
  element: HTMLElement,
  t: Translate,
): { render(rows: InFlightRow[], now: number, more: number): void; tick(rows: InFlightRow[], now: number): void } {
  return {
    render(rows, now, more) {
      element.innerHTML = renderInFlight(t, rows, now, more);
    },
    tick(rows, now) {
      for (const row of rows) {
        const shown = element.querySelector(`[data-job-id="${CSS.escape(row.id)}"]`);
        const stage = shown?.querySelector('.me-stage');
        const elapsed = shown?.querySelector('.me-elapsed');
        if (stage) stage.textContent = stageText(row, now);
        if (elapsed) elapsed.textContent = duration(now - row.startedAt);
      }
    },
  };
}
