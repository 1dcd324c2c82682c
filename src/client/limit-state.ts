// What a client knows of its rate limits at a given moment, per operation, for someone watching it
// (the editor's sidebar): places used and queued, the waits under way, and the 429 answers it met.
import { ENDPOINT_IDS, type EndpointId } from '../contract/endpoints';
import type { Clock } from './clock';
import type { WindowLimiter } from './rate-limiter';

export interface OperationLimitState {
  id: EndpointId;
  /** Places used in the current rolling window. */
  used: number;
  /** null: no limit known. */
  limit: number | null;
  windowMs: number;
  /** Calls waiting for a place. */
  queued: number;
  /** Epoch ms while a wait after a 429, or for a place in a full window, is on; else null. */
  rateLimitedUntil: number | null;
  /** 429 answers seen since the client started. */
  tooManyRequests: number;
}

export interface PollerState {
  /** Media the status poller follows. */
  watching: number;
  /** Epoch ms of its next poll, null when it follows none. */
  nextPollAt: number | null;
}

export interface LimitState {
  /** One per operation, in ENDPOINT_IDS order. */
  operations: OperationLimitState[];
  poller: PollerState;
}

/** The 429 answers of one client and the waits they caused, per operation (the transport reports both). */
export class RateLimitLog {
  private readonly answers = new Map<EndpointId, number>();
  private readonly waitsUntil = new Map<EndpointId, number>();

  constructor(private readonly clock: Clock) {}

  /** A 429 came back for `endpoint`. */
  tooManyRequests(endpoint: EndpointId): void {
    this.answers.set(endpoint, (this.answers.get(endpoint) ?? 0) + 1);
  }

  /** A call of `endpoint` waits until `at` (epoch ms) before it is sent again after a 429. */
  waitingUntil(endpoint: EndpointId, at: number): void {
    this.waitsUntil.set(endpoint, Math.max(at, this.waitsUntil.get(endpoint) ?? 0));
  }

  /** The state of every operation: the limiter's counts with what this log holds. */
  operations(limiterFor: (endpoint: EndpointId) => WindowLimiter): OperationLimitState[] {
    return ENDPOINT_IDS.map((id) => {
      const limiter = limiterFor(id);
      const after429 = this.waitsUntil.get(id) ?? 0;
      // The window is full when its next free place lies ahead: callers queue until then.
      const windowFull = limiter.nextFreeAt();
      const until = Math.max(after429, windowFull);
      // Read after the limiter: a free window's next place is the limiter's own "now", which must not read
      // as a wait ahead when the clock ticked in between (it would change every state, and go stale).
      const now = this.clock.now();
      return {
        id,
        used: limiter.used(),
        limit: limiter.currentLimit(),
        windowMs: limiter.currentWindowMs(),
        queued: limiter.queued(),
        rateLimitedUntil: until > now ? until : null,
        tooManyRequests: this.answers.get(id) ?? 0,
      };
    });
  }
}
