/// <reference lib="dom" />
// The tab in the browser: builds its content, fetches the state from the runtime's permission-checked
// route at open and whenever RED.comms signals a change (the signal carries no content: comms reach users
// who may not read the state), ticks the elapsed times between updates, and hands each section its part of
// the state. Each section is a part of its own (*-section.ts, detail-pane.ts); what they show is rendered
// by the pure render-*.ts functions.
import { adminJson } from './admin-fetch';
import { detailPane } from './detail-pane';
import type { Translate } from './format';
import { inFlightSection } from './in-flight-section';
import { escapeHtml } from './markup';
import { oneAtATime } from './one-fetch-at-a-time';
import type { RedForSidebar } from './red-for-sidebar';
import { helpToggle, renderHelp } from './render-help';
import { resultsSection } from './results-section';
import { servicesSection } from './services-section';
import type { SidebarState } from './shapes';
import { storageSection } from './storage-section';
import { streamsSection } from './streams-section';
import { STATE_TOPIC } from '../../sidebar/state';

export interface SidebarTab {
  /** The tab's content, for RED.sidebar.addTab. */
  content: HTMLElement;
  /** The tab's toolbar, under the sidebar. */
  toolbar: HTMLElement;
}

function section(className: string, title: string): string {
  return `<section class="me-section"><h3 class="me-section-title">${title}</h3><div class="${className}"></div></section>`;
}

export function createSidebarTab(red: RedForSidebar, t: Translate): SidebarTab {
  const content = document.createElement('div');
  content.className = 'me-sidebar';
  content.innerHTML = [
    '<div class="me-lists">',
    renderHelp(t),
    section('me-services', escapeHtml(t('sidebar.service.title'))),
    section('me-inflight', escapeHtml(t('sidebar.inFlight.title'))),
    section('me-streams', escapeHtml(t('sidebar.streams.title'))),
    section('me-results', escapeHtml(t('sidebar.results.title'))),
    section('me-storage-block', escapeHtml(t('sidebar.storage.title'))),
    '</div>',
    '<div class="me-detail-pane" hidden></div>',
  ].join('');
  const toolbar = document.createElement('div');
  toolbar.className = 'me-toolbar';
  toolbar.innerHTML = [
    `<span class="button-group">${helpToggle(t)}</span>`,
    `<span class="button-group"><button type="button" class="red-ui-footer-button me-clear-results" title="${escapeHtml(t('sidebar.results.clear'))}"><i class="fa fa-trash"></i></button></span>`,
  ].join('');
  const part = (selector: string, within: HTMLElement = content) => within.querySelector<HTMLElement>(selector)!;

  const lists = part('.me-lists');
  const services = servicesSection(part('.me-services'), t);
  const inFlight = inFlightSection(part('.me-inflight'), t);
  const streams = streamsSection(part('.me-streams'), t);
  const storage = storageSection(part('.me-storage-block'), red, t);
  const detail = detailPane(part('.me-detail-pane'), lists, red, t);
  const results = resultsSection(part('.me-results'), red, t, {
    open: (id) => void detail.open(id),
    cleared: () => detail.close(),
  });

  let state: SidebarState = { services: [], inFlight: [], inFlightMore: 0, results: [], sentAt: 0 };
  // The runtime's clock minus this browser's: the state's times are the runtime's, and the editor may run
  // on another machine. Each state is fetched, so sent just now.
  let clockOffset = 0;
  const show = (next: SidebarState) => {
    clockOffset = next.sentAt - Date.now();
    state = next;
    const now = Date.now() + clockOffset;
    services.render(state.services, now);
    inFlight.render(state.inFlight, now, state.inFlightMore);
    streams.render(state.streams ?? [], now);
    // A media finished (or the results were cleared): the disk use changed.
    if (results.render(state.results)) void storage.refresh();
  };

  let failing = false;
  const refresh = oneAtATime(async () => {
    try {
      show(await adminJson<SidebarState>(red, 'media-enhance/state'));
      failing = false;
    } catch (err) {
      // Told once per run of failures (a user without the read permission would be told at every change).
      if (!failing)
        red.notify(t('sidebar.service.unavailable', { reason: (err as Error).message }), { type: 'warning' });
      failing = true;
    }
  });
  red.comms.subscribe(STATE_TOPIC, () => void refresh());
  void refresh();
  // Elapsed times, waits and countdowns move on between two updates of the runtime (while the tab shows).
  setInterval(() => {
    if (content.offsetParent === null || lists.hidden) return;
    const now = Date.now() + clockOffset;
    services.render(state.services, now);
    inFlight.tick(state.inFlight, now);
  }, 1000);

  part('.me-clear-results', toolbar).addEventListener('click', () => void results.clear());
  const help = part('.me-help');
  const helpButton = part('.me-help-toggle', toolbar);
  helpButton.addEventListener('click', () => {
    help.hidden = !help.hidden;
    helpButton.setAttribute('aria-expanded', String(!help.hidden));
    if (help.hidden) return;
    detail.close(); // the help is read beside the lists it explains
    content.scrollTop = 0;
  });
  return { content, toolbar };
}
