// The live streams open in enhance stream nodes: one row per stream, its node and topic, format and model,
// latency and realtime factor, and how far behind real time it is when it is.
import { duration, type Translate } from './format';
import { element, openTag } from './markup';
import type { StreamRow } from './shapes';

export function renderStreams(t: Translate, rows: StreamRow[], now: number): string {
  if (rows.length === 0) return element('div', { class: 'me-empty' }, t('sidebar.streams.none'));
  return rows
    .map((row) => {
      const figures = t('sidebar.streams.figures', {
        latency: row.latencyMs === null ? '–' : String(Math.round(row.latencyMs * 100) / 100),
        factor: row.realtimeFactor === null ? '–' : row.realtimeFactor.toFixed(2),
      });
      return [
        openTag('div', { class: 'me-stream-row', 'data-node-id': row.nodeId, 'data-topic': row.topic }),
        element('span', { class: 'me-node-name' }, row.nodeName),
        element('span', { class: 'me-stream-topic' }, row.topic === '' ? t('sidebar.streams.default') : row.topic),
        element(
          'span',
          { class: 'me-stream-format' },
          `${row.model} · ${t('sidebar.streams.format', { rate: row.rate / 1000, channels: row.channels, encoding: row.encoding })}`,
        ),
        element('span', { class: 'me-stream-figures' }, figures),
        row.behindMs > 100
          ? element('span', { class: 'me-error' }, t('sidebar.streams.behind', { behind: Math.round(row.behindMs) }))
          : '',
        element('span', { class: 'me-elapsed', title: t('sidebar.streams.since') }, duration(now - row.since)),
        '</div>',
      ].join('');
    })
    .join('');
}
