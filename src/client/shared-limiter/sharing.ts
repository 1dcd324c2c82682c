import {
  RedisAnswerError,
  RedisTimeoutError,
  RENEW_EVERY_MS,
  type RedisWindowStore,
  type SharingState,
} from './redis-store';

/** How often an unreachable Redis is asked again. */
const PROBE_EVERY_MS = 1000;

/** What Redis must still be told once it is back: places to let go, or to count from then. */
interface Pending {
  endpoint: string;
  member: string;
  action: 'settle' | 'release';
}

/**
 * Whether the limits are shared now, for every limiter of one client. The first call waits (bounded)
 * for the connection; after that a failed or slow Redis call turns sharing off at once, and a probe
 * turns it back on when Redis answers again. What the windows in Redis missed meanwhile is told then.
 */
export class Sharing {
  private state: SharingState | 'connecting' = 'connecting';
  private readonly connected: Promise<void>;
  private probeTimer: NodeJS.Timeout | undefined;
  private pending: Pending[] = [];
  /** Places of requests under way, renewed in Redis while they last. */
  private readonly held = new Map<string, string>();
  private renewTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    readonly store: RedisWindowStore,
    private readonly onStateChange?: (state: SharingState, reason?: string) => void,
  ) {
    this.connected = store.ready(Math.max(2000, 4 * store.timeoutMs)).then((ok) => {
      if (ok) this.become('shared');
      else this.lost(new Error('Redis did not answer'));
    });
  }

  /** Resolves true when calls should go through Redis now (after the first connection attempt). */
  async inUse(): Promise<boolean> {
    if (this.state === 'connecting') await this.connected;
    return this.state === 'shared';
  }

  /** Synchronous view: true only once connected and while Redis answers. */
  get active(): boolean {
    return this.state === 'shared';
  }

  current(): SharingState | 'connecting' {
    return this.state;
  }

  /**
   * A Redis call failed, was too slow or got an answer of the wrong shape (`err` says which): every
   * limiter uses its local window until Redis answers again.
   */
  lost(err?: unknown): void {
    if (this.closed) return;
    if (this.state !== 'unreachable') this.become('unreachable', reasonOf(err));
    this.scheduleProbe();
  }

  /** A change to a place that Redis could not be told of: told when sharing resumes. */
  remember(endpoint: string, member: string, action: Pending['action']): void {
    this.pending = this.pending.filter((p) => p.member !== member);
    this.pending.push({ endpoint, member, action });
  }

  /** A place taken in Redis for a request now under way: kept held until `unhold`. */
  hold(endpoint: string, member: string): void {
    this.held.set(member, endpoint);
    if (this.renewTimer || this.closed) return;
    this.renewTimer = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.renewTimer.unref();
  }

  /** The request was answered or never sent. */
  unhold(member: string): void {
    this.held.delete(member);
    if (this.held.size === 0 && this.renewTimer) {
      clearInterval(this.renewTimer);
      this.renewTimer = undefined;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    if (this.renewTimer) clearInterval(this.renewTimer);
    await this.store.close();
  }

  private async renew(): Promise<void> {
    if (this.state !== 'shared') return;
    const byEndpoint = new Map<string, string[]>();
    for (const [member, endpoint] of this.held) byEndpoint.set(endpoint, [...(byEndpoint.get(endpoint) ?? []), member]);
    try {
      for (const [endpoint, members] of byEndpoint) await this.store.renew(endpoint, members);
    } catch (err) {
      this.lost(err);
    }
  }

  private scheduleProbe(): void {
    if (this.probeTimer || this.closed) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      void this.probe();
    }, PROBE_EVERY_MS);
    // The Redis connection, not the probe, decides whether the process stays alive.
    this.probeTimer.unref();
  }

  private async probe(): Promise<void> {
    try {
      await this.store.ping();
      await this.replayPending();
    } catch {
      this.scheduleProbe();
      return;
    }
    if (!this.closed) this.become('shared');
  }

  /** A place taken just before Redis went away may still be held there: let it go, or count it from now. */
  private async replayPending(): Promise<void> {
    while (this.pending.length > 0) {
      const next = this.pending[0];
      if (next.action === 'settle') await this.store.settle(next.endpoint, next.member);
      else await this.store.release(next.endpoint, [next.member]);
      this.pending.shift();
    }
  }

  private become(state: SharingState, reason?: string): void {
    this.state = state;
    try {
      this.onStateChange?.(state, reason);
    } catch {
      // A caller's callback must not break the limiter.
    }
  }
}

/** Why sharing stopped, in words for a warning (a connection error of ioredis says little more than "closed"). */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  if (err instanceof RedisTimeoutError || err instanceof RedisAnswerError) return message;
  return message ? `Redis unreachable (${message})` : 'Redis unreachable';
}
