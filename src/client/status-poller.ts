import { setMaxListeners } from 'node:events';
import type { Clock } from './clock';
import { MediaEnhanceError } from './errors';
import type { MediaMetadata } from './types';
import { nextPollDelay, type PollIntervals } from './poll-intervals';
import type { Slot, WindowLimiter } from './rate-limiter';
import { decideRetry } from './retry-decision';

export interface WaitOptions {
  signal?: AbortSignal;
  /** Gives up with a TIMEOUT error after this long. Default: wait as long as the media is in progress. */
  timeoutMs?: number;
  /** Called with each new state of the media (the first one seen included), and each new progress it reports. */
  onStatus?: (status: string, metadata: MediaMetadata) => void;
}

interface Waiter {
  resolve(metadata: MediaMetadata): void;
  reject(err: unknown): void;
  onStatus?: WaitOptions['onStatus'];
  lastReported?: string;
  dispose(): void;
}

/** One media being watched, however many callers wait for it. */
interface Watch {
  uid: string;
  waiters: Set<Waiter>;
  startedAt: number;
  dueAt: number;
  polling: boolean;
  /** Seconds the next poll asks the service to hold its answer until the state changes; undefined: a plain poll. */
  waitS?: number;
  /** The pause before a plain poll, should the next poll find no held poll free when it is sent (MAX_HELD_POLLS). */
  pauseMs: number;
  lastStatus?: string;
  failures: number;
}

const FAILURE_STATES = new Set(['FAILED', 'ERROR', 'CANCELLED', 'CANCELED', 'REJECTED']);
const REMEMBERED_TERMINAL_STATES = 1000;

export function isCompleted(status: unknown): boolean {
  return typeof status === 'string' && status.toUpperCase() === 'COMPLETED';
}

export function isFailed(status: unknown): boolean {
  return typeof status === 'string' && FAILURE_STATES.has(status.toUpperCase());
}

/** Held polls at once, at most: each holds a connection (of their own pool) while it waits. */
export const MAX_HELD_POLLS = 32;

export interface PollerDeps {
  limiter: WindowLimiter;
  /**
   * Asks the service once, with a place already taken in the metadata window; with `waitS`, asks it to
   * hold the answer until the media's state changes, at most that many seconds.
   */
  fetchMetadata(uid: string, slot: Slot, signal: AbortSignal, waitS?: number): Promise<MediaMetadata>;
  /**
   * The longest wait the service offers and the client can hold (seconds), when it offers the
   * waiting-metadata extension (docs/interface.md#waiting-metadata); undefined: plain polls only.
   */
  waitOffered?(): number | undefined;
  /** The service refused a wait it had offered: from now on, plain polls. */
  waitRefused?(): void;
  clock: Clock;
  random: () => number;
  intervals: PollIntervals;
}

/**
 * The one status poller of a client. Every wait joins it; waits on the same media share one poll.
 * It takes its places from the metadata limiter, so however many media are watched it never asks more
 * often than the window allows; when places are short, the media due the longest is asked first.
 */
export class StatusPoller {
  private readonly watches = new Map<string, Watch>();
  private readonly terminal = new Map<string, MediaMetadata>();
  private readonly stop = new AbortController();
  private timer: unknown;
  private acquiring = false;
  /** Polls held by the service now. */
  private holding = 0;

  constructor(private readonly deps: PollerDeps) {
    // Every poll listens to this signal: hundreds at once is normal, not a leak.
    setMaxListeners(0, this.stop.signal);
  }

  wait(uid: string, options: WaitOptions = {}): Promise<MediaMetadata> {
    const { signal, timeoutMs, onStatus } = options;
    if (this.stop.signal.aborted) return Promise.reject(closedError(uid));
    if (signal?.aborted) return Promise.reject(abortedError(uid));
    return new Promise<MediaMetadata>((resolve, reject) => {
      const { clock } = this.deps;
      let timeout: unknown;
      const onAbort = () => {
        this.leave(uid, waiter);
        reject(abortedError(uid));
      };
      const waiter: Waiter = {
        resolve,
        reject,
        onStatus,
        dispose: () => {
          if (timeout !== undefined) clock.clearTimeout(timeout);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      const known = this.terminal.get(uid);
      if (known) {
        this.settle(waiter, known);
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) {
        timeout = clock.setTimeout(() => {
          const watch = this.watches.get(uid);
          this.leave(uid, waiter);
          const state = watch?.lastStatus ? `still ${watch.lastStatus}` : 'no state seen yet';
          reject(
            new MediaEnhanceError(
              'TIMEOUT',
              `media ${uid}: not completed after ${Math.round(timeoutMs / 1000)} s (${state})`,
              { mediaUid: uid, retryable: true },
            ),
          );
        }, timeoutMs);
      }
      let watch = this.watches.get(uid);
      if (!watch) {
        const now = clock.now();
        watch = { uid, waiters: new Set(), startedAt: now, dueAt: now, polling: false, failures: 0, pauseMs: 0 };
        this.watches.set(uid, watch);
        this.schedule(watch, now, 0);
      }
      watch.waiters.add(waiter);
      this.run();
    });
  }

  /** Learns a state seen elsewhere (an upload's answer, a metadata call), so a finished media is not asked for. */
  remember(metadata: MediaMetadata): void {
    if (!isCompleted(metadata.enhancement_status) && !isFailed(metadata.enhancement_status)) return;
    this.terminal.delete(metadata.uid);
    this.terminal.set(metadata.uid, metadata);
    if (this.terminal.size > REMEMBERED_TERMINAL_STATES) this.terminal.delete(this.terminal.keys().next().value!);
  }

  /** How many media are watched now. */
  watching(): number {
    return this.watches.size;
  }

  /**
   * When the next poll goes out (epoch ms): the earliest due media, not before the metadata window has a
   * place; null when no media is followed or every one is being asked now.
   */
  nextPollAt(): number | null {
    let next = Infinity;
    for (const watch of this.watches.values()) if (!watch.polling) next = Math.min(next, watch.dueAt);
    if (next === Infinity) return null;
    return Math.max(next, this.deps.limiter.nextFreeAt());
  }

  close(): void {
    this.stop.abort();
    this.clearTimer();
    for (const watch of this.watches.values()) {
      for (const waiter of watch.waiters) {
        waiter.dispose();
        waiter.reject(closedError(watch.uid));
      }
    }
    this.watches.clear();
  }

  private leave(uid: string, waiter: Waiter): void {
    waiter.dispose();
    const watch = this.watches.get(uid);
    if (!watch) return;
    watch.waiters.delete(waiter);
    if (watch.waiters.size === 0) this.watches.delete(uid);
    // Nobody left to poll for: no timer should outlive the last wait (a closing node checks for that).
    if (this.watches.size === 0) this.clearTimer();
  }

  /** Sends every poll that is due and has a place; then sleeps until the next one is due. */
  private run(): void {
    this.clearTimer();
    if (this.stop.signal.aborted) return;
    const now = this.deps.clock.now();
    for (let watch = this.earliestDue(now); watch; watch = this.earliestDue(now)) {
      const slot = this.deps.limiter.tryAcquire();
      if (!slot) {
        this.waitForPlace();
        return;
      }
      this.poll(watch, slot);
    }
    let next = Infinity;
    for (const watch of this.watches.values()) if (!watch.polling) next = Math.min(next, watch.dueAt);
    if (next < Infinity) this.timer = this.deps.clock.setTimeout(() => this.run(), next - now);
  }

  /** The window is full: queue once at the limiter, and give the place to whichever media is due first then. */
  private waitForPlace(): void {
    if (this.acquiring) return;
    this.acquiring = true;
    this.deps.limiter.acquire({ signal: this.stop.signal }).then(
      (slot) => {
        this.acquiring = false;
        const watch = this.earliestDue(this.deps.clock.now());
        if (watch) this.poll(watch, slot);
        else slot.refund();
        this.run();
      },
      () => {
        this.acquiring = false;
      },
    );
  }

  private earliestDue(now: number): Watch | undefined {
    let best: Watch | undefined;
    for (const watch of this.watches.values()) {
      if (watch.polling || watch.dueAt > now) continue;
      if (!best || watch.dueAt < best.dueAt) best = watch;
    }
    return best;
  }

  private poll(watch: Watch, slot: Slot): void {
    // The cap on held polls is the polls held now: when it is reached, this one waits its pause as a plain poll.
    if (watch.waitS !== undefined && this.holding >= MAX_HELD_POLLS) {
      watch.waitS = undefined;
      if (watch.pauseMs > 0) {
        slot.refund();
        watch.dueAt = this.deps.clock.now() + watch.pauseMs;
        return;
      }
    }
    watch.polling = true;
    const waitS = watch.waitS;
    if (waitS !== undefined) this.holding++;
    const ended = () => {
      watch.polling = false;
      if (waitS !== undefined) this.holding--;
    };
    this.deps.fetchMetadata(watch.uid, slot, this.stop.signal, waitS).then(
      (metadata) => {
        ended();
        watch.failures = 0;
        this.remember(metadata);
        this.deliver(watch, metadata);
        this.run();
      },
      (err: unknown) => {
        ended();
        if (this.stop.signal.aborted) return;
        watch.waitS = undefined; // the retry, if any, is a plain poll
        if (waitS !== undefined && err instanceof MediaEnhanceError && err.code === 'VALIDATION') {
          // The service offered waits but refuses this one: poll as the interface says, at once.
          this.deps.waitRefused?.();
          watch.dueAt = this.deps.clock.now();
          this.run();
          return;
        }
        // A loop around polls: each poll is sent once (`maxRetries: 0` in client.ts), and retried here.
        const now = this.deps.clock.now();
        const decision = decideRetry({
          loop: 'poll',
          code: err instanceof MediaEnhanceError ? err.code : undefined,
          failures: watch.failures + 1,
          waitedMs: now - watch.startedAt,
          intervals: this.deps.intervals,
          random: this.deps.random,
        });
        if (decision.retry) {
          watch.failures++;
          watch.dueAt = now + decision.afterMs;
        } else {
          this.endWatch(watch, (waiter) => waiter.reject(err));
        }
        this.run();
      },
    );
  }

  private deliver(watch: Watch, metadata: MediaMetadata): void {
    const status = String(metadata.enhancement_status);
    watch.lastStatus = status;
    if (isCompleted(status) || isFailed(status)) {
      this.endWatch(watch, (waiter) => this.settle(waiter, metadata));
      return;
    }
    for (const waiter of watch.waiters) report(waiter, status, metadata);
    const now = this.deps.clock.now();
    this.schedule(watch, now, nextPollDelay(this.deps.intervals, now - watch.startedAt, this.deps.random));
  }

  /**
   * When to ask next, `delayMs` from now as the interface's guidance says: a service that holds answers
   * is asked at once to hold this one as long (so a change comes back when it happens, with no more
   * requests than polling makes); otherwise after the pause. The first look holds the first interval.
   */
  private schedule(watch: Watch, now: number, delayMs: number): void {
    const offered = this.deps.waitOffered?.();
    const holdMs = delayMs > 0 ? delayMs : nextPollDelay(this.deps.intervals, 0, this.deps.random);
    watch.pauseMs = delayMs;
    if (offered !== undefined) {
      watch.waitS = Math.max(1, Math.min(offered, Math.round(holdMs / 1000)));
      watch.dueAt = now;
    } else {
      watch.waitS = undefined;
      watch.dueAt = now + delayMs;
    }
  }

  private endWatch(watch: Watch, each: (waiter: Waiter) => void): void {
    if (this.watches.get(watch.uid) === watch) this.watches.delete(watch.uid);
    for (const waiter of watch.waiters) {
      waiter.dispose();
      each(waiter);
    }
    watch.waiters.clear();
  }

  private settle(waiter: Waiter, metadata: MediaMetadata): void {
    const status = String(metadata.enhancement_status);
    report(waiter, status, metadata);
    waiter.dispose();
    if (isCompleted(status)) waiter.resolve(metadata);
    else waiter.reject(jobFailedError(metadata));
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

function report(waiter: Waiter, status: string, metadata: MediaMetadata): void {
  // A new progress (an extension field some services add while processing) is news too.
  const seen = metadata.progress === undefined ? status : `${status} ${JSON.stringify(metadata.progress)}`;
  if (waiter.lastReported === seen) return;
  waiter.lastReported = seen;
  try {
    waiter.onStatus?.(status, metadata);
  } catch {
    // A caller's callback must not break the poller for everyone else.
  }
}

function jobFailedError(metadata: MediaMetadata): MediaEnhanceError {
  const error = metadata.error as { code?: unknown; message?: unknown } | undefined;
  const reason = typeof error?.message === 'string' ? error.message : 'the service gave no reason';
  const code = typeof error?.code === 'string' ? ` [${error.code}]` : '';
  return new MediaEnhanceError(
    'JOB_FAILED',
    `${reason} (media ${metadata.uid} ended ${metadata.enhancement_status}${code})`,
    {
      mediaUid: metadata.uid,
      details: [`${metadata.enhancement_status}${code}: ${reason}`],
    },
  );
}

function abortedError(uid: string): MediaEnhanceError {
  return new MediaEnhanceError('ABORTED', `media ${uid}: waiting was aborted`, { mediaUid: uid });
}

function closedError(uid: string): MediaEnhanceError {
  return new MediaEnhanceError('ABORTED', `media ${uid}: the client was closed while waiting`, { mediaUid: uid });
}
