// One node's status line when many messages are in flight: it shows the job that changed last, with
// the number of others, at most a few times a second (progress events come far more often).
import type { NodeStatus, RedNode } from './red';
import { duration } from './duration';

export interface JobStatus {
  text: string;
  fill?: NodeStatus['fill'];
  /** When set, the text is followed by the time since then, updated every second ("processing 1m20s"). */
  since?: number;
}

const RENDER_INTERVAL_MS = 250;
const TICK_MS = 1000;

export class StatusBoard {
  private readonly active = new Map<number, JobStatus>();
  private lastChanged?: number;
  private final?: NodeStatus;
  private nextId = 1;
  private renderTimer?: NodeJS.Timeout;
  private tickTimer?: NodeJS.Timeout;
  private lastRenderAt = 0;
  private closed = false;

  constructor(
    private readonly node: Pick<RedNode, 'status'>,
    private readonly now: () => number = Date.now,
  ) {}

  begin(status: JobStatus): number {
    const id = this.nextId++;
    this.update(id, status);
    return id;
  }

  update(id: number, status: JobStatus): void {
    if (this.closed) return;
    this.active.set(id, status);
    this.lastChanged = id;
    this.schedule();
  }

  /** The job is over; its final status shows once no other job is running. */
  end(id: number, final: NodeStatus): void {
    if (this.closed) return;
    this.active.delete(id);
    this.final = final;
    if (this.lastChanged === id) this.lastChanged = [...this.active.keys()].pop();
    this.schedule();
  }

  /** Stops every timer; nothing is shown after this. */
  close(): void {
    this.closed = true;
    clearTimeout(this.renderTimer);
    clearInterval(this.tickTimer);
    this.renderTimer = this.tickTimer = undefined;
  }

  private schedule(): void {
    if (this.renderTimer) return;
    const wait = this.lastRenderAt + RENDER_INTERVAL_MS - this.now();
    if (wait <= 0) this.render();
    else this.renderTimer = setTimeout(() => this.render(), wait);
  }

  private render(): void {
    this.renderTimer = undefined;
    this.lastRenderAt = this.now();
    const shown = this.lastChanged === undefined ? undefined : this.active.get(this.lastChanged);
    if (!shown) {
      this.stopTicking();
      this.node.status(this.final ?? {});
      return;
    }
    const others = this.active.size - 1;
    const elapsed = shown.since === undefined ? '' : ` ${duration(this.now() - shown.since)}`;
    this.node.status({
      fill: shown.fill ?? 'blue',
      shape: 'dot',
      text: `${shown.text}${elapsed}${others > 0 ? ` (+${others})` : ''}`,
    });
    if (shown.since === undefined) this.stopTicking();
    else this.tickTimer ??= setInterval(() => this.schedule(), TICK_MS);
  }

  private stopTicking(): void {
    clearInterval(this.tickTimer);
    this.tickTimer = undefined;
  }
}
