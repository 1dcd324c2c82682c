// One block per service (config node): what it is, where it is, and per operation how much of the rate
// limit's rolling window is used (a bar), what waits, and the poller that follows media to completion.
import type { EndpointId } from '../../contract/endpoints';
import { clockTime, duration, windowLength, type Translate } from './format';
import { element, openTag } from './markup';
import type { OperationState, ServiceState } from './shapes';

const OPERATION_NAMES: Record<EndpointId, string> = {
  enhanceAudio: 'sidebar.operation.enhanceAudio',
  enhanceVideo: 'sidebar.operation.enhanceVideo',
  uploadMedia: 'sidebar.operation.uploadMedia',
  getMetadata: 'sidebar.operation.getMetadata',
  downloadFile: 'sidebar.operation.downloadFile',
};

const SHARING: Record<ServiceState['sharing'], string> = {
  off: 'sidebar.service.sharingOff',
  connecting: 'sidebar.service.sharingConnecting',
  shared: 'sidebar.service.sharingShared',
  unreachable: 'sidebar.service.sharingUnreachable',
};

/** How full the window is, 0..1; a full window or a wait after a 429 shows as the warning colour. */
function fill(operation: OperationState): number {
  if (operation.limit === null || operation.limit <= 0) return 0;
  return Math.min(1, operation.used / operation.limit);
}

function renderOperation(t: Translate, operation: OperationState, now: number): string {
  const limited = operation.rateLimitedUntil !== null && operation.rateLimitedUntil > now;
  const window = windowLength(operation.windowMs);
  const count =
    operation.limit === null
      ? t('sidebar.operation.usedNoLimit', { used: operation.used, window })
      : t('sidebar.operation.used', { used: operation.used, limit: operation.limit, window });
  const notes = [
    operation.queued > 0 ? t('sidebar.operation.queued', { count: operation.queued }) : null,
    limited ? t('sidebar.operation.rateLimited', { time: clockTime(operation.rateLimitedUntil!) }) : null,
    operation.tooManyRequests > 0 ? t('sidebar.operation.tooManyRequests', { count: operation.tooManyRequests }) : null,
  ].filter((note): note is string => note !== null);
  const share = fill(operation);
  const state = limited ? 'me-op-limited' : share >= 0.8 ? 'me-op-busy' : '';
  return [
    openTag('div', { class: `me-op ${state}`.trim(), 'data-operation': operation.id }),
    '<div class="me-op-head">',
    element('span', { class: 'me-op-name' }, t(OPERATION_NAMES[operation.id])),
    element('span', { class: 'me-op-count' }, count),
    '</div>',
    openTag('div', {
      class: 'me-op-bar',
      role: 'meter',
      'aria-label': t(OPERATION_NAMES[operation.id]),
      'aria-valuemin': 0,
      'aria-valuemax': operation.limit, // left out when there is no limit
      'aria-valuenow': operation.used,
      title: count,
    }),
    openTag('div', { class: 'me-op-fill', style: `width: ${(share * 100).toFixed(1)}%` }),
    '</div></div>',
    notes.length > 0 ? element('div', { class: 'me-op-notes' }, notes.join(' · ')) : '',
    '</div>',
  ].join('');
}

function pollerLine(t: Translate, service: ServiceState, now: number): string {
  const { watching, nextPollAt } = service.poller;
  if (watching === 0) return t('sidebar.service.pollerIdle');
  if (nextPollAt === null) return t('sidebar.service.pollerWatching', { count: watching });
  return t('sidebar.service.pollerNext', { count: watching, wait: duration(Math.max(0, nextPollAt - now)) });
}

/**
 * A service without any limit (the built-in engine by default) has no bar to fill: its counts fold into
 * one line that opens on a click, so that the media in flight and the results stay on the first screen.
 */
function renderUnlimited(t: Translate, operations: OperationState[], now: number): string {
  const total = operations.reduce((sum, operation) => sum + operation.used, 0);
  const waiting = operations.some((operation) => operation.queued > 0 || operation.tooManyRequests > 0);
  return [
    openTag('details', { class: 'me-ops-unlimited', open: waiting }),
    element(
      'summary',
      { class: 'me-ops-summary' },
      t('sidebar.operation.noLimits', { count: total, window: windowLength(operations[0].windowMs) }),
    ),
    ...operations.map((operation) => renderOperation(t, operation, now)),
    '</details>',
  ].join('');
}

function unlimited(operations: OperationState[]): boolean {
  return operations.length > 0 && operations.every((operation) => operation.limit === null);
}

function renderOperations(t: Translate, operations: OperationState[], now: number): string {
  if (unlimited(operations)) return renderUnlimited(t, operations, now);
  return operations.map((operation) => renderOperation(t, operation, now)).join('');
}

export function renderService(t: Translate, service: ServiceState, now: number): string {
  const kind = service.kind === 'built-in' ? t('sidebar.service.builtIn') : t('sidebar.service.remote');
  return [
    openTag('div', { class: 'me-service', 'data-service-id': service.id }),
    '<div class="me-service-head">',
    element('span', { class: 'me-service-name' }, service.name),
    // A service named after its kind ("built-in engine") needs no badge saying it again.
    service.name === kind ? '' : element('span', { class: 'me-badge' }, kind),
    '</div>',
    element('div', { class: 'me-service-url' }, service.url ?? t('sidebar.service.notStarted')),
    // Limits that are not there are not shared either: the line is said only when it tells something.
    unlimited(service.operations) && service.sharing === 'off'
      ? ''
      : element('div', { class: 'me-service-sharing' }, t(SHARING[service.sharing])),
    service.error === null ? '' : element('div', { class: 'me-service-error' }, service.error),
    renderOperations(t, service.operations, now),
    element('div', { class: 'me-poller' }, pollerLine(t, service, now)),
    '</div>',
  ].join('');
}

export function renderServices(t: Translate, services: ServiceState[], now: number): string {
  if (services.length === 0) return element('div', { class: 'me-empty' }, t('sidebar.service.none'));
  return services.map((service) => renderService(t, service, now)).join('');
}
