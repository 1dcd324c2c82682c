// The live streams open in enhance stream nodes: one row per stream, its node and topic, format and model,
// latency and realtime factor, the memory it holds, how long its chunks wait when they do, how many streams
// share its thread, and how often its state had to start afresh.
import { bytesText, duration, type Translate } from './format';
import { element, openTag } from './markup';
import type { StreamRow } from './shapes';

/** A wait up to this is a stream keeping up (the node's status says the same). */
const KEEPING_UP_MS = 100;

export function renderStreams(t: Translate, rows: StreamRow[], now: number): string {
  if (rows.length === 0) return element('div', { class: 'me-empty' }, t('sidebar.streams.none'));
  return rows
    .map((row) => {
      const figures = t('sidebar.streams.figures', {
        latency: row.latencyMs === null ? '–' : String(Math.round(row.latencyMs * 100) / 100),
        factor: row.realtimeFactor === null ? '–' : row.realtimeFactor.toFixed(2),
        memory: bytesText(row.memoryBytes),
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
        row.threadStreams > 1
          ? element('span', { class: 'me-stream-thread' }, t('sidebar.streams.thread', { count: row.threadStreams }))
          : '',
        row.waitMs > KEEPING_UP_MS
          ? element('span', { class: 'me-error' }, t('sidebar.streams.waiting', { wait: Math.round(row.waitMs) }))
          : '',
        row.resets > 0
          ? element('span', { class: 'me-error' }, t('sidebar.streams.resets', { count: row.resets }))
          : '',
        element('span', { class: 'me-elapsed', title: t('sidebar.streams.since') }, duration(now - row.since)),
        '</div>',
      ].join('');
    })
    .join('');
}
