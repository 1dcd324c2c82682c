// The media in flight (one row per job, its stage's time ticking in the browser between updates) and
// the finished ones (newest first; each opens its detail view).
import { clockTime, decibels, duration, shortUid, type Translate } from './format';
import { element, openTag } from './markup';
import type { InFlightRow, ResultRow } from './shapes';

/** "processing 1m20s": the stage, and how long it has lasted when the runtime says since when. */
export function stageText(row: InFlightRow, now: number): string {
  return row.stageSince === null ? row.stage : `${row.stage} ${duration(now - row.stageSince)}`;
}

/** The rows listed, and a line counting the `more` jobs the runtime did not list. */
export function renderInFlight(t: Translate, rows: InFlightRow[], now: number, more = 0): string {
  if (rows.length === 0 && more === 0) return element('div', { class: 'me-empty' }, t('sidebar.inFlight.none'));
  const moreLine =
    more > 0 ? element('div', { class: 'me-inflight-more' }, t('sidebar.inFlight.more', { count: more })) : '';
  return rows
    .map((row) =>
      [
        openTag('div', { class: 'me-inflight-row', 'data-job-id': row.id, 'data-node-id': row.nodeId }),
        element('span', { class: 'me-node-name' }, row.nodeName),
        element('span', { class: 'me-uid', title: row.uid ?? '' }, shortUid(row.uid)),
        element('span', { class: 'me-stage' }, stageText(row, now)),
        element('span', { class: 'me-elapsed', title: t('sidebar.inFlight.elapsed') }, duration(now - row.startedAt)),
        '</div>',
      ].join(''),
    )
    .join('')
    .concat(moreLine);
}

/** "-23.4 → -16.0 LUFS" for a done media whose figures are known; the error for a failed one. */
function resultSummary(t: Translate, row: ResultRow): string {
  if (row.outcome === 'failed')
    return element(
      'span',
      { class: 'me-error' },
      row.errorCode ? `${row.errorCode}: ${row.error ?? ''}` : (row.error ?? ''),
    );
  const loudness = row.loudness;
  if (!loudness || (loudness.input_lufs === null && loudness.output_lufs === null))
    return element('span', { class: 'me-result-loudness' }, t('sidebar.results.done'));
  return element(
    'span',
    { class: 'me-result-loudness' },
    t('sidebar.results.loudness', { input: decibels(loudness.input_lufs), output: decibels(loudness.output_lufs) }),
  );
}

export function renderResults(t: Translate, rows: ResultRow[]): string {
  if (rows.length === 0) return element('div', { class: 'me-empty' }, t('sidebar.results.none'));
  return rows
    .map((row) =>
      [
        openTag('div', {
          class: `me-result-row me-result-${row.outcome}`,
          'data-result-id': row.id,
          role: 'button',
          tabindex: 0,
          title: t('sidebar.results.open'),
        }),
        '<div class="me-result-head">',
        element(
          'span',
          { class: 'me-outcome' },
          t(row.outcome === 'done' ? 'sidebar.results.outcomeDone' : 'sidebar.results.outcomeFailed'),
        ),
        element('span', { class: 'me-file' }, row.fileName ?? t('sidebar.results.noFile')),
        element('span', { class: 'me-finished' }, clockTime(row.finishedAt)),
        '</div><div class="me-result-body">',
        element('span', { class: 'me-node-name' }, row.nodeName),
        element('span', { class: 'me-uid', title: row.uid ?? '' }, shortUid(row.uid)),
        resultSummary(t, row),
        '</div></div>',
      ].join(''),
    )
    .join('');
}
