import { RATE_LIMIT_HEADERS } from '../../contract/endpoints';
import type { Clock } from '../clock';
import { serverUsedHeader } from '../rate-limit-headers';
import type { HeaderBag } from '../rate-limit-headers';
import type { AcquireOptions, RollingWindowLimiter, Slot, WaitInfo, WindowLimiter } from '../rate-limiter';
import type { Sharing } from './sharing';

/** Longest pause between two asks while only answers under way hold the window (they free no time known). */
const MAX_POLL_MS = 250;

/** A caller that holds its local place and waits for one in the shared window. */
interface GateEntry {
  local: Slot;
  resolve(slot: Slot): void;
  reject(err: unknown): void;
  onWait?: (info: WaitInfo) => void;
  detach(): void;
}

/**
 * The rolling window of one operation shared by every instance that uses the key, through Redis.
 * A call first takes its place in this instance's own limiter (FIFO order, places held by requests under
 * way, the limit learned from the service), then in the shared window: only the first in line asks
 * Redis, so the order inside the instance stays. When Redis fails or is slow, the calls in line go on
 * with their local places alone, and so does every call until Redis answers again.
 */
export class SharedWindowLimiter implements WindowLimiter {
  private gate: GateEntry[] = [];
  /** The first in line is asking Redis, or waits to ask again. */
  private asking = false;
  private timer: unknown;
  /** When Redis last said the next place frees. */
  private sharedFreeAt = -Infinity;

  constructor(
    private readonly endpoint: string,
    private readonly local: RollingWindowLimiter,
    private readonly sharing: Sharing,
    private readonly clock: Clock,
  ) {}

  /** Only the local limiter answers at once: while sharing, every place comes through acquire(). */
  tryAcquire(): Slot | undefined {
    if (this.sharing.current() === 'unreachable' || this.local.currentLimit() === null) return this.local.tryAcquire();
    return undefined;
  }

  async acquire(options: AcquireOptions = {}): Promise<Slot> {
    const local = await this.local.acquire(options);
    const { signal } = options;
    if (this.local.currentLimit() === null || !(await this.sharing.inUse())) return this.wrap(local, undefined);
    if (signal?.aborted) {
      local.refund();
      throw signal.reason;
    }
    return new Promise<Slot>((resolve, reject) => {
      const onAbort = () => {
        this.gate = this.gate.filter((e) => e !== entry);
        local.refund();
        // The reason is the caller's (an Error from AbortController.abort() or the client's close()).
        reject(signal!.reason as Error);
      };
      const entry: GateEntry = {
        local,
        resolve,
        reject,
        onWait: options.onWait,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (options.front) this.gate.unshift(entry);
      else this.gate.push(entry);
      this.ask();
    });
  }

  nextFreeAt(): number {
    return Math.max(this.local.nextFreeAt(), this.sharedFreeAt);
  }

  used(): number {
    return this.local.used();
  }

  queued(): number {
    return this.local.queued() + this.gate.length;
  }

  currentLimit(): number | null {
    return this.local.currentLimit();
  }

  currentWindowMs(): number {
    return this.local.currentWindowMs();
  }

  observe(headers: HeaderBag, retryAfterMs?: number): void {
    this.learn(headers, retryAfterMs);
  }

  rejectAll(reason: unknown): void {
    this.local.rejectAll(reason);
    const waiting = this.gate;
    this.gate = [];
    this.clearTimer();
    for (const entry of waiting) {
      entry.detach();
      entry.local.refund();
      entry.reject(reason);
    }
  }

  /** The first in line asks Redis for a place; the line waits until it has one or Redis says when. */
  private ask(): void {
    if (this.asking || this.gate.length === 0) return;
    if (!this.sharing.active) {
      this.releaseGate();
      return;
    }
    this.asking = true;
    const head = this.gate[0];
    const member = this.sharing.store.newMember();
    const limit = this.local.currentLimit() ?? Infinity;
    const windowMs = this.local.currentWindowMs();
    this.sharing.store.acquire(this.endpoint, limit, windowMs, member).then(
      (answer) => {
        if (answer.taken) {
          this.asking = false;
          this.sharedFreeAt = -Infinity;
          if (!this.gate.includes(head)) {
            // The caller left while Redis answered.
            this.release(member);
          } else {
            // Still first, unless a retry went ahead of it meanwhile: it has its place either way.
            this.gate = this.gate.filter((e) => e !== head);
            head.detach();
            this.sharing.hold(this.endpoint, member);
            head.resolve(this.wrap(head.local, member));
          }
          this.ask();
          return;
        }
        const waitMs = answer.waitMs ?? Math.min(MAX_POLL_MS, windowMs / Math.max(1, limit));
        this.sharedFreeAt = this.clock.now() + waitMs;
        this.gate.forEach((e, i) => e.onWait?.({ position: i + 1, waitMs }));
        this.timer = this.clock.setTimeout(() => {
          this.timer = undefined;
          this.asking = false;
          this.ask();
        }, waitMs);
      },
      (err: unknown) => {
        // No answer in time: the place may still have been taken; Redis lets it go once it is back.
        this.asking = false;
        this.sharing.remember(this.endpoint, member, 'release');
        this.sharing.lost(err);
        this.releaseGate();
      },
    );
  }

  /** Sharing is off: everyone in line goes on with the local place already held. */
  private releaseGate(): void {
    const waiting = this.gate;
    this.gate = [];
    this.clearTimer();
    for (const entry of waiting) {
      entry.detach();
      entry.resolve(this.wrap(entry.local, undefined));
    }
  }

  /** A refund here frees a place there: the line need not wait for the time Redis gave. */
  private wake(): void {
    if (this.timer === undefined) return;
    this.clearTimer();
    this.asking = false;
    this.ask();
  }

  /** One place: the local one, and the one in Redis (`member`) when it was taken there. */
  private wrap(local: Slot, member: string | undefined): Slot {
    return {
      settle: () => {
        local.settle();
        if (member) this.settleShared(member);
      },
      refund: () => {
        local.refund();
        if (member) this.release(member);
      },
      answered: (headers, rateLimited, retryAfterMs) => {
        // While sharing, Redis knows the others' use: the local window learns only the limit and the window.
        local.answered(this.sharing.active ? limitOnly(headers) : headers, rateLimited, retryAfterMs);
        if (member) {
          if (rateLimited) this.release(member);
          else this.settleShared(member);
        }
        this.learnShared(headers, retryAfterMs);
      },
    };
  }

  private learn(headers: HeaderBag, retryAfterMs?: number): void {
    this.local.observe(this.sharing.active ? limitOnly(headers) : headers, retryAfterMs);
    this.learnShared(headers, retryAfterMs);
  }

  /** The service's count wins when it is higher than Redis knows (a client that does not share the window). */
  private learnShared(headers: HeaderBag, retryAfterMs?: number): void {
    if (!this.sharing.active) return;
    const used = serverUsedHeader(headers);
    // Without a limit the window has no places to fill; with one, Redis adds at most up to it.
    const limit = this.local.currentLimit();
    if (used === undefined || used <= 0 || limit === null) return;
    this.sharing.store.observe(this.endpoint, used, limit, this.local.currentWindowMs(), retryAfterMs).then(
      () => undefined,
      (err: unknown) => this.sharing.lost(err),
    );
  }

  private settleShared(member: string): void {
    this.sharing.unhold(member);
    this.sharing.store.settle(this.endpoint, member).then(
      () => undefined,
      (err: unknown) => {
        this.sharing.remember(this.endpoint, member, 'settle');
        this.sharing.lost(err);
      },
    );
  }

  private release(member: string): void {
    this.sharing.unhold(member);
    this.sharing.store.release(this.endpoint, [member]).then(
      () => this.wake(),
      (err: unknown) => {
        this.sharing.remember(this.endpoint, member, 'release');
        this.sharing.lost(err);
      },
    );
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

function header(headers: HeaderBag, name: string): string | undefined {
  const raw = headers[name];
  return Array.isArray(raw) ? raw[0] : raw;
}

function limitOnly(headers: HeaderBag): HeaderBag {
  return {
    [RATE_LIMIT_HEADERS.limit]: header(headers, RATE_LIMIT_HEADERS.limit),
    [RATE_LIMIT_HEADERS.window]: header(headers, RATE_LIMIT_HEADERS.window),
  };
}
