/// <reference lib="dom" />
// The tab's detail view of one result: fetched when a row opens, drawn to the pane's width (again when
// the sidebar is resized, unless a file plays), its A/B players switched at the same moment, and its
// download links sent with the user's token when adminAuth is on.
import { fileNameFromDisposition } from '../../contract/attachment';
import { adminFetch, adminJson } from './admin-fetch';
import type { Translate } from './format';
import { PlayerSources } from './player-sources';
import type { RedForSidebar } from './red-for-sidebar';
import { renderDetail } from './render-detail';
import type { ResultDetails } from './shapes';

export interface DetailPane {
  /** Fetches the result and shows it in place of the lists. */
  open(id: string): Promise<void>;
  /** Back to the lists. */
  close(): void;
}

/** `pane` takes the place of `lists` while a result shows. */
export function detailPane(pane: HTMLElement, lists: HTMLElement, red: RedForSidebar, t: Translate): DetailPane {
  let detail: ResultDetails | null = null;
  const players = new PlayerSources(red);
  players.watch(pane);
  const render = () => {
    if (!detail) return;
    // A resize while a file plays leaves the page as it is: a new render would stop the player.
    if ([...pane.querySelectorAll('audio')].some((audio) => !audio.paused)) return;
    const width = Math.max(240, Math.min(720, pane.clientWidth - 20));
    pane.innerHTML = renderDetail(t, detail, { width, height: Math.round(width * 0.55) }, players.source);
  };
  const close = () => {
    detail = null;
    pane.hidden = true;
    pane.innerHTML = '';
    lists.hidden = false;
  };
  /** Shows the player of `step` at the moment the other one was, playing on if it played. */
  const switchPlayer = (step: string) => {
    const audios = [...pane.querySelectorAll<HTMLAudioElement>('audio.me-audio')];
    const from = audios.find((audio) => !audio.hidden);
    const to = audios.find((audio) => audio.dataset.step === step);
    if (!from || !to || from === to) return;
    const playing = !from.paused;
    from.pause();
    to.currentTime = from.currentTime;
    from.hidden = true;
    to.hidden = false;
    for (const button of pane.querySelectorAll<HTMLElement>('.me-ab-choice'))
      button.setAttribute('aria-pressed', String(button.dataset.step === step));
    if (playing) void to.play();
  };
  pane.addEventListener('click', (event) => {
    const target = event.target as HTMLElement;
    if (target.closest('.me-detail-back')) return close();
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
  red.events.on('sidebar:resize', render);
  return {
    async open(id) {
      let chosen: ResultDetails;
      try {
        chosen = await adminJson<ResultDetails>(red, `media-enhance/results/${encodeURIComponent(id)}`);
      } catch (err) {
        red.notify(t('sidebar.detail.unavailable', { reason: (err as Error).message }), { type: 'error' });
        return;
      }
      await players.open(chosen.result);
      detail = chosen;
      lists.hidden = true;
      pane.hidden = false;
      render();
    },
    close,
  };
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
