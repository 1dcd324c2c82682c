/// <reference lib="dom" />
// The tab in the browser: builds its content, fetches the state from the runtime's permission-checked
// route at open and whenever RED.comms signals a change (the signal carries no content: comms reach users
// who may not read the state), ticks the elapsed times between updates, and opens a result's detail view. Everything it shows is rendered by the pure
// render-*.ts functions; this file only wires them to the page.
import { duration, type Translate } from './format';
import { escapeHtml } from './markup';
import { adminFetch, adminJson } from './admin-fetch';
import { PlayerSources } from './player-sources';
import { renderDetail, type ResultDetail } from './render-detail';
import { helpToggle, renderHelp } from './render-help';
import { renderInFlight, renderResults, stageText } from './render-jobs';
import { renderServices } from './render-services';
import { renderStreams } from './render-streams';
import { bytesText, renderStorage } from './render-storage';
import { fileNameFromDisposition } from '../../contract/attachment';
import { STATE_TOPIC } from '../../sidebar/state';
import type { SidebarState, StorageState } from './shapes';

/** The part of the editor's global `RED` the tab uses. */
export interface RedForSidebar {
  comms: { subscribe(topic: string, callback: (topic: string, data: unknown) => void): void };
  settings: { get(name: string): unknown; apiRootUrl?: string };
  events: { on(event: string, callback: () => void): void };
  notify(
    text: string,
    options?: {
      type?: string;
      timeout?: number;
      modal?: boolean;
      fixed?: boolean;
      buttons?: { text: string; class?: string; click: () => void }[];
    },
  ): { close(): void } | undefined;
}

/** A link's file through a request that carries the token (a plain link cannot), saved under its name. */
async function downloadWithToken(red: RedForSidebar, link: HTMLAnchorElement): Promise<void> {
  const response = await adminFetch(red, link.getAttribute('href')!);
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  // The exact name (RFC 5987) when the runtime sent one; else the ASCII fallback (the client's own reading).
  const name = fileNameFromDisposition(response.headers.get('content-disposition') ?? undefined) ?? 'media';
  const url = URL.createObjectURL(await response.blob());
  const save = document.createElement('a');
  save.href = url;
  save.download = name;
  save.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function section(className: string, title: string): string {
  return `<section class="me-section"><h3 class="me-section-title">${title}</h3><div class="${className}"></div></section>`;
}

export interface SidebarTab {
  /** The tab's content, for RED.sidebar.addTab. */
  content: HTMLElement;
  /** The tab's toolbar, under the sidebar. */
  toolbar: HTMLElement;
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

  const lists = content.querySelector<HTMLElement>('.me-lists')!;
  const help = content.querySelector<HTMLElement>('.me-help')!;
  const helpButton = toolbar.querySelector<HTMLElement>('.me-help-toggle')!;
  const services = content.querySelector<HTMLElement>('.me-services')!;
  const inFlight = content.querySelector<HTMLElement>('.me-inflight')!;
  const streams = content.querySelector<HTMLElement>('.me-streams')!;
  const results = content.querySelector<HTMLElement>('.me-results')!;
  const storageBlock = content.querySelector<HTMLElement>('.me-storage-block')!;
  const detailPane = content.querySelector<HTMLElement>('.me-detail-pane')!;

  let state: SidebarState = { services: [], inFlight: [], inFlightMore: 0, results: [], sentAt: 0 };
  // The runtime's clock minus this browser's: the state's times are the runtime's, and the editor may run
  // on another machine. Each state is fetched, so sent just now.
  let clockOffset = 0;
  let shownResults = '';
  let detail: ResultDetail | null = null;

  let shownServices = '';
  /** The services whose folded counts (no limits) the user opened: a new render keeps them open. */
  const opened = new Set<string>();
  services.addEventListener(
    'toggle',
    (event) => {
      const folded = event.target as HTMLDetailsElement;
      const id = folded.closest<HTMLElement>('.me-service')?.dataset.serviceId;
      if (id === undefined || !folded.matches('.me-ops-unlimited')) return;
      if (folded.open) opened.add(id);
      else opened.delete(id);
    },
    true, // toggle does not bubble
  );
  const renderServicesNow = (now: number) => {
    const servicesHtml = renderServices(t, state.services, now);
    if (servicesHtml === shownServices) return;
    services.innerHTML = shownServices = servicesHtml;
    for (const id of opened)
      services
        .querySelector<HTMLDetailsElement>(`.me-service[data-service-id="${CSS.escape(id)}"] .me-ops-unlimited`)
        ?.setAttribute('open', '');
  };
  const renderLive = () => {
    const now = Date.now() + clockOffset;
    renderServicesNow(now);
    inFlight.innerHTML = renderInFlight(t, state.inFlight, now, state.inFlightMore);
    streams.innerHTML = renderStreams(t, state.streams ?? [], now);
    // Shown only while a stream is open: most flows have none, and the results stay on the first screen.
    streams.parentElement!.hidden = (state.streams ?? []).length === 0;
  };
  // Between two updates only the times move: their texts change in place, so a tooltip or a selection in
  // the lists stays (a rebuilt row would drop it every second).
  const tick = () => {
    const now = Date.now() + clockOffset;
    renderServicesNow(now);
    for (const row of state.inFlight) {
      const shown = inFlight.querySelector(`[data-job-id="${CSS.escape(row.id)}"]`);
      const stage = shown?.querySelector('.me-stage');
      const elapsed = shown?.querySelector('.me-elapsed');
      if (stage) stage.textContent = stageText(row, now);
      if (elapsed) elapsed.textContent = duration(now - row.startedAt);
    }
  };
  const show = (next: SidebarState) => {
    clockOffset = next.sentAt - Date.now();
    state = next;
    renderLive();
    const resultsHtml = renderResults(t, state.results);
    if (resultsHtml !== shownResults) {
      results.innerHTML = shownResults = resultsHtml;
      // A media finished (or the results were cleared): the disk use changed.
      void refreshStorage();
    }
  };
  const players = new PlayerSources(red);
  players.watch(detailPane);
  const renderDetailPane = () => {
    if (!detail) return;
    // A resize while a file plays leaves the page as it is: a new render would stop the player.
    if ([...detailPane.querySelectorAll('audio')].some((audio) => !audio.paused)) return;
    const width = Math.max(240, Math.min(720, detailPane.clientWidth - 20));
    detailPane.innerHTML = renderDetail(t, detail, { width, height: Math.round(width * 0.55) }, players.source);
  };

  let storage: StorageState = { services: [] };
  let storageFetch: Promise<void> | null = null;
  let storageAgain = false;
  const refreshStorage = async (): Promise<void> => {
    if (storageFetch) {
      storageAgain = true;
      return storageFetch;
    }
    storageFetch = (async () => {
      do {
        storageAgain = false;
        try {
          storage = await adminJson<StorageState>(red, 'media-enhance/storage');
          storageBlock.innerHTML = renderStorage(t, storage, Date.now());
        } catch {
          // The state's own refresh tells a user who may not read; a storage block that stays is enough.
        }
      } while (storageAgain);
    })().finally(() => (storageFetch = null));
    return storageFetch;
  };
  const removeFinished = async () => {
    try {
      const response = await adminFetch(red, 'media-enhance/storage/remove', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      const removed = (await response.json()) as { removed: number; bytes: number };
      red.notify(t('sidebar.storage.removed', { count: removed.removed, bytes: bytesText(removed.bytes) }), {
        type: 'success',
      });
    } catch (err) {
      red.notify(t('sidebar.storage.removeFailed', { reason: (err as Error).message }), { type: 'error' });
    }
    await refreshStorage();
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
  storageBlock.addEventListener('click', (event) => {
    if ((event.target as HTMLElement).closest('.me-storage-remove')) confirmRemove();
  });
  const openDetail = async (id: string) => {
    let chosen: ResultDetail;
    try {
      chosen = await adminJson<ResultDetail>(red, `media-enhance/results/${encodeURIComponent(id)}`);
    } catch (err) {
      red.notify(t('sidebar.detail.unavailable', { reason: (err as Error).message }), { type: 'error' });
      return;
    }
    await players.open(chosen.result);
    detail = chosen;
    lists.hidden = true;
    detailPane.hidden = false;
    renderDetailPane();
  };
  /** Shows the player of `step` at the moment the other one was, playing on if it played. */
  const switchPlayer = (step: string) => {
    const players = [...detailPane.querySelectorAll<HTMLAudioElement>('audio.me-audio')];
    const from = players.find((audio) => !audio.hidden);
    const to = players.find((audio) => audio.dataset.step === step);
    if (!from || !to || from === to) return;
    const playing = !from.paused;
    from.pause();
    to.currentTime = from.currentTime;
    from.hidden = true;
    to.hidden = false;
    for (const button of detailPane.querySelectorAll<HTMLElement>('.me-ab-choice'))
      button.setAttribute('aria-pressed', String(button.dataset.step === step));
    if (playing) void to.play();
  };
  const closeDetail = () => {
    detail = null;
    detailPane.hidden = true;
    detailPane.innerHTML = '';
    lists.hidden = false;
  };

  // One fetch at a time: signals that come during one make one more fetch after it, not one each.
  let fetching = false;
  let again = false;
  let failing = false;
  const refresh = async () => {
    if (fetching) {
      again = true;
      return;
    }
    fetching = true;
    try {
      do {
        again = false;
        try {
          show(await adminJson<SidebarState>(red, 'media-enhance/state'));
          failing = false;
        } catch (err) {
          // Told once per run of failures (a user without the read permission would be told at every change).
          if (!failing)
            red.notify(t('sidebar.service.unavailable', { reason: (err as Error).message }), { type: 'warning' });
          failing = true;
        }
      } while (again);
    } finally {
      fetching = false;
    }
  };
  red.comms.subscribe(STATE_TOPIC, () => void refresh());
  void refresh();
  // Elapsed times, waits and countdowns move on between two updates of the runtime (while the tab shows).
  setInterval(() => {
    if (content.offsetParent !== null && !lists.hidden) tick();
  }, 1000);
  red.events.on('sidebar:resize', renderDetailPane);

  const openFrom = (target: EventTarget | null) => {
    const row = (target as HTMLElement | null)?.closest<HTMLElement>('.me-result-row');
    if (row?.dataset.resultId) void openDetail(row.dataset.resultId);
  };
  results.addEventListener('click', (event) => openFrom(event.target));
  results.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      openFrom(event.target);
    }
  });
  detailPane.addEventListener('click', (event) => {
    const target = event.target as HTMLElement;
    if (target.closest('.me-detail-back')) return closeDetail();
    const choice = target.closest<HTMLButtonElement>('.me-ab-choice');
    if (choice) return switchPlayer(choice.dataset.step!);
    const link = target.closest<HTMLAnchorElement>('a[download]');
    // With adminAuth on, the token must go along: a plain link cannot carry it.
    if (link && red.settings.get('auth-tokens')) {
      event.preventDefault();
      downloadWithToken(red, link).catch((err: Error) =>
        red.notify(t('sidebar.detail.unavailable', { reason: err.message }), { type: 'error' }),
      );
    }
  });
  const clearResults = async () => {
    try {
      // A JSON body: a request no other site's page can make without the runtime's consent (CORS).
      const response = await adminFetch(red, 'media-enhance/results/clear', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      });
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      closeDetail(); // the emptied list comes with the next update
    } catch (err) {
      red.notify(t('sidebar.results.clearFailed', { reason: (err as Error).message }), { type: 'error' });
    }
  };
  toolbar.querySelector('.me-clear-results')!.addEventListener('click', () => void clearResults());
  helpButton.addEventListener('click', () => {
    help.hidden = !help.hidden;
    helpButton.setAttribute('aria-expanded', String(!help.hidden));
    if (help.hidden) return;
    closeDetail(); // the help is read beside the lists it explains
    content.scrollTop = 0;
  });
  return { content, toolbar };
}
