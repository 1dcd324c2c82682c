// Tells every open editor through Node-RED's comms that the sidebar's state changed: a signal with a
// version, never the state itself (comms reach every connected editor, including users without the
// package's read permission; the editor fetches the state from GET /media-enhance/state, which checks
// it). Retained (an editor opened later learns the version at once), only when the state changed, and
// at most once per interval whatever the number of jobs, with the last change always signalled. Changes
// of the registry wake it; the limiters' windows move on without telling anyone, so it also looks once
// a second.
import type { SidebarRegistry } from './registry';
import { STATE_TOPIC, type StateSignal } from './state';

export type Publish = (topic: string, data: unknown, retain: boolean) => void;

export interface PublisherOptions {
  /** At most one publish per this many ms (250: four a second). */
  minIntervalMs?: number;
  /** How often the limiters' state is looked at when nothing else changed. */
  lookEveryMs?: number;
  now?: () => number;
  /** Where a failure to send goes (Node-RED's log). */
  warn?: (message: string) => void;
}

export class StatePublisher {
  private readonly minIntervalMs: number;
  private readonly lookEveryMs: number;
  private readonly now: () => number;
  private readonly warn: (message: string) => void;
  private lastJson = '';
  private version = 0;
  private lastAt = -Infinity;
  private pending?: NodeJS.Timeout;
  private looking?: NodeJS.Timeout;
  private unsubscribe?: () => void;

  constructor(
    private readonly registry: SidebarRegistry,
    private readonly publish: Publish,
    options: PublisherOptions = {},
  ) {
    this.minIntervalMs = options.minIntervalMs ?? 250;
    this.lookEveryMs = options.lookEveryMs ?? 1000;
    this.now = options.now ?? Date.now;
    this.warn = options.warn ?? (() => undefined);
  }

  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.registry.onChange(() => this.schedule());
    // Unref'd: watching the state must never keep a process alive.
    this.looking = setInterval(() => this.schedule(), this.lookEveryMs).unref();
    this.schedule();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearInterval(this.looking);
    clearTimeout(this.pending);
    this.looking = this.pending = undefined;
  }

  private schedule(): void {
    if (this.pending) return;
    const wait = this.lastAt + this.minIntervalMs - this.now();
    if (wait <= 0) this.flush();
    else this.pending = setTimeout(() => this.flush(), wait).unref();
  }

  private flush(): void {
    this.pending = undefined;
    // Called from the nodes' own code (a job's start, a transfer's progress): a failure here must never
    // reach a message, so it is only logged.
    try {
      const state = this.registry.snapshot();
      const json = JSON.stringify({ ...state, sentAt: 0 }); // a change is a change of anything but the time
      if (json === this.lastJson) return;
      this.lastJson = json;
      this.lastAt = this.now();
      const signal: StateSignal = { version: ++this.version };
      this.publish(STATE_TOPIC, signal, true);
    } catch (err) {
      this.warn(`media enhance sidebar: the editors could not be told of a change: ${(err as Error).message}`);
    }
  }
}
