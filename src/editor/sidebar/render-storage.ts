// The storage block: per built-in engine, the media it keeps on disk (how many, how many finished, the
// bytes, the oldest), the rule by which it removes finished media on its own, in words, and the button
// that removes the finished ones now.
import { bytesText, clockTime, duration, type Translate } from './format';
import { element, openTag } from './markup';
import type { ServiceStorageState, StorageRule, StorageState } from './shapes';

/** 7 days, 12 h, 30 min: a retention period as a person says it, in the sidebar's language. */
function period(t: Translate, ms: number): string {
  if (ms % 86_400_000 === 0)
    return t(ms === 86_400_000 ? 'sidebar.storage.periodDay' : 'sidebar.storage.periodDays', {
      count: ms / 86_400_000,
    });
  if (ms % 3_600_000 === 0) return t('sidebar.storage.periodHours', { count: ms / 3_600_000 });
  if (ms % 60_000 === 0) return t('sidebar.storage.periodMinutes', { count: ms / 60_000 });
  return duration(ms);
}

/** The retention rule in one sentence. */
export function retentionText(t: Translate, rule: StorageRule): string {
  const grace = period(t, rule.graceMs);
  if (rule.maxAgeMs !== null && rule.maxTotalBytes !== null)
    return t('sidebar.storage.ruleAgeAndSize', {
      age: period(t, rule.maxAgeMs),
      size: bytesText(rule.maxTotalBytes),
      grace,
    });
  if (rule.maxAgeMs !== null) return t('sidebar.storage.ruleAge', { age: period(t, rule.maxAgeMs), grace });
  if (rule.maxTotalBytes !== null) return t('sidebar.storage.ruleSize', { size: bytesText(rule.maxTotalBytes), grace });
  return t('sidebar.storage.ruleNone');
}

function oldestText(t: Translate, oldest: string | null, now: number): string {
  if (oldest === null) return '';
  const at = Date.parse(oldest);
  const date = new Date(at);
  const day = [date.getFullYear(), date.getMonth() + 1, date.getDate()]
    .map((n) => String(n).padStart(2, '0'))
    .join('-');
  return t('sidebar.storage.oldest', { date: `${day} ${clockTime(at)}`, ago: duration(now - at) });
}

function renderOne(t: Translate, entry: ServiceStorageState, now: number): string {
  const { use } = entry;
  return [
    // The exact figures ride along as attributes: the text rounds the bytes.
    openTag('div', {
      class: 'me-storage',
      'data-service-id': entry.serviceId,
      'data-media': use?.media ?? null,
      'data-finished': use?.finished ?? null,
      'data-bytes': use?.bytes ?? null,
      'data-oldest': use?.oldest ?? null,
    }),
    element('div', { class: 'me-storage-name' }, entry.name),
    use === null
      ? element('div', { class: 'me-error' }, entry.error ?? '')
      : [
          element(
            'div',
            { class: 'me-storage-use' },
            t('sidebar.storage.use', { media: use.media, finished: use.finished, bytes: bytesText(use.bytes) }),
          ),
          use.oldest === null ? '' : element('div', { class: 'me-storage-oldest' }, oldestText(t, use.oldest, now)),
        ].join(''),
    element('div', { class: 'me-storage-rule' }, retentionText(t, entry.retention)),
    '</div>',
  ].join('');
}

export function renderStorage(t: Translate, state: StorageState, now: number): string {
  if (state.services.length === 0) return element('div', { class: 'me-empty' }, t('sidebar.storage.none'));
  const finished = state.services.reduce((sum, entry) => sum + (entry.use?.finished ?? 0), 0);
  return [
    ...state.services.map((entry) => renderOne(t, entry, now)),
    '<div class="me-storage-actions">',
    openTag('button', {
      type: 'button',
      class: 'red-ui-button red-ui-button-small me-storage-remove',
      disabled: finished === 0,
    }),
    `<i class="fa fa-trash"></i> ${element('span', {}, t('sidebar.storage.remove'))}</button>`,
    '</div>',
  ].join('');
}
