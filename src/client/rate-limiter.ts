import { RATE_LIMIT_HEADERS } from '../contract/endpoints';
import type { Clock } from './clock';
import { countHeader, serverUsedHeader, windowHeader, type HeaderBag } from './rate-limit-headers';

/** What a caller is told while it waits for a place. */
export interface WaitInfo {
  /** 1 for the next in line. */
  position: number;
  /** Estimated milliseconds until this caller is sent. */
  waitMs: number;
}

/**
 * A place in the window, taken by one request. While the request is under way the place is held; once
 * answered it counts from the moment of the answer (never earlier than the service counted it).
 */
export interface Slot {
  /** The service may have seen the request (no answer to learn from): the place counts from now. */
  settle(): void;
  /** Gives the place back: the request never reached the service. */
  refund(): void;
  /**
   * The service answered: the place counts from now, or is given back for a 429 (which the service
   * does not count); then the answer's headers correct the count, before anyone waiting is let through.
   */
  answered(headers: HeaderBag, rateLimited: boolean, retryAfterMs?: number): void;
}

export interface AcquireOptions {
  signal?: AbortSignal;
  onWait?: (info: WaitInfo) => void;
  /** Goes to the head of the line (a retry, which has waited its turn already). */
  front?: boolean;
}

/** What the transport and the status poller need of a limiter: the local one, or one shared through Redis. */
export interface WindowLimiter {
  tryAcquire(): Slot | undefined;
  acquire(options?: AcquireOptions): Promise<Slot>;
  nextFreeAt(): number;
  used(): number;
  queued(): number;
  currentLimit(): number | null;
  currentWindowMs(): number;
  observe(headers: HeaderBag, retryAfterMs?: number): void;
  rejectAll(reason: unknown): void;
}

interface Waiter {
  resolve(slot: Slot): void;
  reject(err: unknown): void;
  onWait?: (info: WaitInfo) => void;
  detach(): void;
}

/**
 * A rolling-window (sliding log) limiter for one endpoint of one client: at most `limit` sends in any
 * `windowMs`. Callers that find the window full wait in FIFO order. The service's X-RateLimit-* headers
 * correct the local view: its count wins when it is higher (another client may share the key). Once such
 * sharing is seen, sends are spread evenly over the window rather than sent in bursts, so that the
 * clients interleave, each sees the others' requests in the counts, and they stop colliding.
 */
export class RollingWindowLimiter implements WindowLimiter {
  private readonly configuredLimit: number | null;
  private limit: number | null;
  private windowMs: number;
  /** Times of answered sends, oldest first. Entries may lie in the future when derived from a Retry-After. */
  private sends: number[] = [];
  /** Sends under way: they hold a place until answered. */
  private inFlight = 0;
  private lastSendAt = -Infinity;
  /** When the service's count last showed requests that were not ours. */
  private sharedSeenAt = -Infinity;
  /** The entries of `sends` that stand for other clients' requests (also in `sends`). */
  private others: number[] = [];
  /** Most entries of others seen in the log while sharing. */
  private othersPeak = 0;
  private queue: Waiter[] = [];
  private timer: unknown;
  private timerDueAt = Infinity;

  constructor(
    limit: number | null,
    windowMs: number,
    private readonly clock: Clock,
  ) {
    this.configuredLimit = limit;
    this.limit = limit;
    this.windowMs = windowMs;
  }

  /** Takes a place at once if one is free and nobody waits ahead; otherwise undefined. */
  tryAcquire(): Slot | undefined {
    if (this.queue.length > 0 || this.freePlaces() < 1) return undefined;
    return this.take();
  }

  /** Resolves with a place in the window; waits in line while the window is full. */
  acquire(options: AcquireOptions = {}): Promise<Slot> {
    const { signal, onWait, front } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.queue.length === 0 && this.freePlaces() >= 1) return Promise.resolve(this.take());
    return new Promise<Slot>((resolve, reject) => {
      const onAbort = () => {
        this.queue = this.queue.filter((w) => w !== waiter);
        reject(signal!.reason);
        this.pump();
      };
      const waiter: Waiter = {
        resolve,
        reject,
        onWait,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (front) this.queue.unshift(waiter);
      else this.queue.push(waiter);
      this.pump();
    });
  }

  /**
   * Earliest time at which a place can be free (now when one is). When only an answer still under way
   * can free it, one window from now is the estimate; the answer wakes the line earlier.
   */
  nextFreeAt(): number {
    const now = this.clock.now();
    this.prune(now);
    if (this.limit === null) return now;
    const over = this.sends.length + this.inFlight - this.limit;
    let at = now;
    if (over >= 0) at = over < this.sends.length ? this.sends[over] + this.windowMs : now + this.windowMs;
    if (this.paced(now)) at = Math.max(at, this.lastSendAt + this.spacing());
    return Math.max(now, at);
  }

  /** Places taken in the current window, as far as this client knows. */
  used(): number {
    this.prune(this.clock.now());
    return this.sends.length + this.inFlight;
  }

  queued(): number {
    return this.queue.length;
  }

  currentLimit(): number | null {
    return this.limit;
  }

  currentWindowMs(): number {
    return this.windowMs;
  }

  /**
   * Learns from a response's X-RateLimit-* headers. `retryAfterMs` (from a 429) says when a place frees:
   * the places the service counts beyond ours are then assumed to expire at that moment, otherwise one
   * whole window from now (the safe guess).
   */
  observe(headers: HeaderBag, retryAfterMs?: number): void {
    this.learn(headers, retryAfterMs);
  }

  private learn(headers: HeaderBag, retryAfterMs?: number): void {
    const now = this.clock.now();
    const limit = countHeader(headers, RATE_LIMIT_HEADERS.limit);
    const windowSeconds = windowHeader(headers);
    if (windowSeconds !== undefined) this.windowMs = windowSeconds * 1000;
    if (limit !== undefined && limit > 0) {
      // The service's limit binds; a lower limit configured here (to leave room for others) stays.
      this.limit = this.configuredLimit === null ? limit : Math.min(this.configuredLimit, limit);
    }
    this.prune(now);
    // Never more than the window holds: one entry per counted request, so the count is capped at the limit.
    const counted = serverUsedHeader(headers);
    const serverUsed = counted === undefined || this.limit === null ? counted : Math.min(counted, this.limit);
    if (serverUsed !== undefined && serverUsed > this.sends.length + this.inFlight) {
      const stamp = retryAfterMs === undefined ? now : now + retryAfterMs - this.windowMs;
      const missing = serverUsed - this.sends.length - this.inFlight;
      for (let i = 0; i < missing; i++) {
        this.insert(stamp);
        this.others.push(stamp);
      }
      if (!this.paced(now)) this.othersPeak = 0;
      this.othersPeak = Math.max(this.othersPeak, this.others.length);
      this.sharedSeenAt = now;
    }
    this.pump();
  }

  /** Fails every waiting caller with `reason`; used when the client closes. */
  rejectAll(reason: unknown): void {
    const waiting = this.queue;
    this.queue = [];
    for (const w of waiting) {
      w.detach();
      w.reject(reason);
    }
    this.clearTimer();
  }

  private freePlaces(): number {
    const now = this.clock.now();
    this.prune(now);
    if (this.limit === null) return Infinity;
    if (this.paced(now) && now < this.lastSendAt + this.spacing()) return 0;
    // Entries stamped in the future (from a Retry-After) hold their place until they expire too.
    return this.limit - this.sends.length - this.inFlight;
  }

  /** Spread sends out for two windows after another client's requests were seen in the counts. */
  private paced(now: number): boolean {
    return now - this.sharedSeenAt < 2 * this.windowMs;
  }

  /**
   * While sharing, this client's share of the window: what the others left, sent evenly. The others'
   * largest use seen lately counts, not only what is left of it in the log, or each new window would
   * start with a burst.
   */
  private spacing(): number {
    const share = Math.max(1, (this.limit ?? Infinity) - Math.max(this.others.length, this.othersPeak));
    return this.windowMs / share;
  }

  private take(): Slot {
    this.inFlight++;
    this.lastSendAt = this.clock.now();
    let open = true;
    let stamp: number | undefined;
    const close = (counted: boolean) => {
      if (!open) return false;
      open = false;
      this.inFlight--;
      if (counted) {
        stamp = this.clock.now();
        this.insert(stamp);
      }
      return true;
    };
    return {
      settle: () => {
        if (close(true)) this.pump();
      },
      refund: () => {
        if (close(false)) this.pump();
      },
      answered: (headers, rateLimited, retryAfterMs) => {
        if (close(!rateLimited)) this.learn(headers, retryAfterMs);
      },
    };
  }

  private insert(stamp: number): void {
    let i = this.sends.length;
    while (i > 0 && this.sends[i - 1] > stamp) i--;
    this.sends.splice(i, 0, stamp);
  }

  private prune(now: number): void {
    const live = (stamp: number) => stamp + this.windowMs > now;
    let expired = 0;
    while (expired < this.sends.length && !live(this.sends[expired])) expired++;
    if (expired > 0) this.sends.splice(0, expired);
    if (this.others.length > 0) this.others = this.others.filter(live);
  }

  private pump(): void {
    while (this.queue.length > 0 && this.freePlaces() >= 1) {
      const waiter = this.queue.shift()!;
      waiter.detach();
      waiter.resolve(this.take());
    }
    if (this.queue.length === 0) {
      this.clearTimer();
      return;
    }
    const dueAt = this.nextFreeAt();
    const now = this.clock.now();
    this.queue.forEach((w, i) => w.onWait?.({ position: i + 1, waitMs: this.estimateWait(i, now) }));
    if (dueAt !== this.timerDueAt) {
      this.clearTimer();
      this.timerDueAt = dueAt;
      this.timer = this.clock.setTimeout(() => {
        this.timer = undefined;
        this.timerDueAt = Infinity;
        this.pump();
      }, dueAt - now);
    }
  }

  /** When the waiter at `index` in line can expect its place, from the log's expiry times. */
  private estimateWait(index: number, now: number): number {
    if (this.limit === null) return 0;
    const over = this.sends.length + this.inFlight - this.limit + index;
    if (over < 0) return 0;
    if (over < this.sends.length) return Math.max(0, this.sends[over] + this.windowMs - now);
    // Beyond what the log can tell: one more window for each `limit` callers ahead.
    return this.windowMs * (Math.floor((over - this.sends.length) / this.limit) + 1);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueAt = Infinity;
  }
}
