/// <reference lib="dom" />
// The sources of the detail view's players. A media element sends no header, so it cannot carry the
// user's token as the tab's other requests do, and the token is kept out of addresses: each file plays
// from the play route with a ticket of its own, asked for (with the token) when a result opens. A
// player whose ticket ran out while the result stayed open gets a new one and goes on.
import { adminFetch } from './admin-fetch';
import { playedSteps, playUrl, type MediaSource, type PlayedStep } from './render-detail';
import type { ResultRow } from './shapes';
import type { RedForSidebar } from './red-for-sidebar';

export class PlayerSources {
  private uid: string | null = null;
  private sources = new Map<PlayedStep, string>();

  constructor(private readonly red: RedForSidebar) {}

  /** Asks for a ticket for each file the player offers for `result`; call it before the result shows. */
  async open(result: ResultRow): Promise<void> {
    const steps = playedSteps(result);
    const sources = await Promise.all(steps.map((step) => this.withTicket(result.uid!, step)));
    this.uid = result.uid;
    this.sources = new Map(steps.map((step, i) => [step, sources[i]]));
  }

  /** The source of one file of the open result, as renderDetail takes it. */
  readonly source: MediaSource = (uid, step) =>
    (uid === this.uid ? this.sources.get(step) : undefined) ?? this.bare(uid, step);

  /** Watches the players in `pane`: one whose file fails to load is given a new ticket, once until it loads. */
  watch(pane: HTMLElement): void {
    // Media events do not bubble: these listen on the way down.
    const on = (type: string, react: (audio: HTMLAudioElement) => void) =>
      pane.addEventListener(
        type,
        (event) => {
          if ((event.target as HTMLElement).matches('audio.me-audio')) react(event.target as HTMLAudioElement);
        },
        true,
      );
    on('play', (audio) => (audio.dataset.wanted = 'true'));
    on('pause', (audio) => delete audio.dataset.wanted);
    on('loadeddata', (audio) => delete audio.dataset.renewed);
    on('error', (audio) => void this.renew(audio));
  }

  /** Plays on under a new ticket from where the player was, playing if it was asked to. */
  private async renew(audio: HTMLAudioElement): Promise<void> {
    const { uid } = this;
    const step = audio.dataset.step as PlayedStep;
    if (uid === null || audio.dataset.renewed === 'true') return;
    audio.dataset.renewed = 'true'; // a second failure before it loads is not the ticket's
    const at = audio.currentTime;
    const wanted = audio.dataset.wanted === 'true';
    const src = await this.withTicket(uid, step);
    if (this.uid !== uid || !audio.isConnected) return; // another result opened meanwhile
    this.sources.set(step, src);
    audio.src = src;
    audio.currentTime = at;
    if (wanted) audio.play().catch(() => undefined);
  }

  /**
   * The play route with a new ticket for the file; without one (the request failed) the bare route,
   * which serves an editor without adminAuth.
   */
  private async withTicket(uid: string, step: PlayedStep): Promise<string> {
    const url = this.bare(uid, step);
    try {
      const response = await adminFetch(this.red, `media-enhance/media/${encodeURIComponent(uid)}/tickets`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ step }),
      });
      if (!response.ok) return url;
      const { ticket } = (await response.json()) as { ticket: string };
      return `${url}&ticket=${encodeURIComponent(ticket)}`;
    } catch {
      return url;
    }
  }

  private bare(uid: string, step: PlayedStep): string {
    return `${this.red.settings.apiRootUrl ?? ''}${playUrl(uid, step)}`;
  }
}
