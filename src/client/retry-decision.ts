// Every retry decision of the client, in one pure function: what failed, which attempt, what the service
// said and the policy go in; "retry after N ms" or "give up" comes out, with the reason. Three loops ask it,
// and each keeps its own count and does its own waiting:
//   - the transport (transport.ts) around each request: refused connections, error statuses, answers lost;
//   - a download to a file (download.ts) around the transport's requests: a body cut off mid-way resumes;
//   - the status poller (status-poller.ts) around its polls, which the transport does not retry.

import { fullJitterDelay, type RetryPolicy } from './backoff';
import { REFUSED_FOR_NOW_STATUSES, RETRYABLE_STATUSES } from './errors';
import { nextPollDelay, type PollIntervals } from './poll-intervals';

/** Failures where the service cannot have seen the request: safe to send again, even a POST. */
export const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * The connection broke (reset, closed, a write into a closed socket). Whether the service can have acted
 * depends on what had been sent: see `bodyUnsent`.
 */
export const BROKEN_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** The service refuses connections: it is restarting or briefly down, and is tried for `unreachableForMs`. */
export const REFUSED_CODE = 'ECONNREFUSED';

/** Client error codes after which polling again cannot help. */
const FINAL_POLL_ERROR_CODES = new Set(['NOT_FOUND', 'AUTH', 'VALIDATION']);

/** A failed poll waits this many poll intervals at most (one after the first failure, two after the second...). */
const MAX_POLL_BACKOFF_INTERVALS = 4;

/** What went wrong with one attempt of a request. */
export type RequestFailure =
  /** No answer: connecting or sending failed; `code` as Node.js and undici name it (may be empty). */
  | {
      kind: 'connection';
      code: string;
      /** How long the service has refused connections in a row, up to this refusal (0 at the first). */
      refusedForMs: number;
      /**
       * The request's streamed body had not been read to its end when the connection failed, and no
       * answer had come. The service then holds part of the body at most: it cannot have accepted the
       * request (an upload is accepted only whole, with the length announced in Content-Length), so even
       * a POST is safe to send again. A body read to its end proves nothing either way (it may sit in a
       * socket buffer, or have been processed before the answer was lost), so it is not retried.
       */
      bodyUnsent?: boolean;
    }
  /** The service answered with a status other than 2xx. */
  | {
      kind: 'status';
      status: number;
      /** The service's `Retry-After`, in ms. */
      retryAfterMs?: number;
      /** When the rate-limit window (as the service's headers describe it) has a place again, in ms from now. */
      windowFreesInMs: number;
    }
  /** The service answered 2xx, then the connection broke while its answer was read. */
  | { kind: 'answer-lost' };

/** One attempt of a request (transport.ts) failed. */
export interface RequestFailed {
  loop: 'request';
  failure: RequestFailure;
  /** A GET: the service may see it twice without harm. */
  idempotent: boolean;
  /** False when the body comes from a one-shot stream that cannot be sent again. */
  replayable: boolean;
  /** Which attempt failed: 0 for the first. */
  attempt: number;
  /** Retries made so far that spent one of `policy.maxRetries`. */
  retries: number;
  policy: RetryPolicy;
  random: () => number;
}

/** Why one request of a download to a file gave no complete file. */
export type DownloadFailure =
  | 'cut' // the connection broke while the body streamed
  | 'short' // the body ended before the length the service announced
  | 'disk' // writing the file failed
  | 'part-outdated'; // the kept part is longer than the file (416): the service's copy changed

/** A download to a file (download.ts) got no complete file from one request. */
export interface DownloadFailed {
  loop: 'download';
  failure: DownloadFailure;
  /** Which attempt failed: 0 for the first. */
  attempt: number;
  policy: RetryPolicy;
  random: () => number;
}

/** A status poll (status-poller.ts) failed. */
export interface PollFailed {
  loop: 'poll';
  /** The client error's code (`NOT_FOUND`, `NETWORK`...), when the failure is a client error. */
  code?: string;
  /** Failed polls in a row, this one included. */
  failures: number;
  /** How long the media has been watched. */
  waitedMs: number;
  intervals: PollIntervals;
  random: () => number;
}

export type RetryQuestion = RequestFailed | DownloadFailed | PollFailed;

export type RetryReason =
  | 'connection-refused'
  | 'not-sent'
  | 'not-accepted'
  | 'connection-failed'
  | 'rate-limited'
  | 'retryable-status'
  | 'answer-lost'
  | 'transfer-cut'
  | 'transfer-short'
  | 'part-outdated'
  | 'poll-failed';

export type GiveUpReason =
  | 'retries-spent'
  | 'unreachable-too-long'
  | 'unsafe-to-resend'
  | 'not-replayable'
  | 'final-status'
  | 'disk-failed'
  | 'final-poll-error';

export type RetryDecision =
  | {
      retry: true;
      afterMs: number;
      reason: RetryReason;
      /** Whether this retry spends one of `maxRetries` (a refused connection spends `unreachableForMs` instead). */
      spendsRetry: boolean;
    }
  | { retry: false; reason: GiveUpReason };

export function decideRetry(question: RetryQuestion): RetryDecision {
  switch (question.loop) {
    case 'request':
      return decideRequest(question);
    case 'download':
      return decideDownload(question);
    case 'poll':
      return decidePoll(question);
  }
}

function decideRequest(q: RequestFailed): RetryDecision {
  const { failure, policy } = q;
  const backoff = () => fullJitterDelay(policy, q.retries, q.random);
  const budgetLeft = q.retries < policy.maxRetries;
  switch (failure.kind) {
    case 'connection': {
      const notSent = NOT_SENT_CODES.has(failure.code);
      const notAccepted = failure.bodyUnsent === true && BROKEN_CODES.has(failure.code);
      if (!q.replayable) return giveUp('not-replayable');
      if (notAccepted && !q.idempotent) {
        if (!budgetLeft) return giveUp('retries-spent');
        return retryAfter(backoff(), 'not-accepted');
      }
      if (!q.idempotent && !notSent) return giveUp('unsafe-to-resend');
      if (failure.code === REFUSED_CODE) {
        // Such a request never reached the service: tried for a time, not a number of retries.
        if (policy.maxRetries <= 0) return giveUp('retries-spent');
        if (failure.refusedForMs >= policy.unreachableForMs) return giveUp('unreachable-too-long');
        const afterMs = fullJitterDelay(policy, Math.min(q.attempt, policy.maxRetries), q.random);
        return { retry: true, afterMs, reason: 'connection-refused', spendsRetry: false };
      }
      if (!budgetLeft) return giveUp('retries-spent');
      return retryAfter(backoff(), notSent ? 'not-sent' : 'connection-failed');
    }
    case 'status': {
      if (!RETRYABLE_STATUSES.has(failure.status)) return giveUp('final-status');
      // A POST is sent again only after answers that say the service did nothing with it.
      if (!q.idempotent && !REFUSED_FOR_NOW_STATUSES.has(failure.status)) return giveUp('unsafe-to-resend');
      if (!budgetLeft) return giveUp('retries-spent');
      if (!q.replayable) return giveUp('not-replayable');
      const rateLimited = failure.status === 429;
      // Never earlier than the service asks, nor (after a 429) than the window frees; the jitter comes on top.
      const notBefore = Math.max(failure.retryAfterMs ?? 0, rateLimited ? failure.windowFreesInMs : 0);
      return retryAfter(notBefore + backoff(), rateLimited ? 'rate-limited' : 'retryable-status');
    }
    case 'answer-lost':
      // The service may have done what a POST asked: sending it again could do it twice.
      if (!q.idempotent) return giveUp('unsafe-to-resend');
      if (!q.replayable) return giveUp('not-replayable');
      if (!budgetLeft) return giveUp('retries-spent');
      return retryAfter(backoff(), 'answer-lost');
  }
}

function decideDownload(q: DownloadFailed): RetryDecision {
  // Resuming cannot help when the disk failed, not the connection.
  if (q.failure === 'disk') return giveUp('disk-failed');
  if (q.attempt >= q.policy.maxRetries) return giveUp('retries-spent');
  switch (q.failure) {
    case 'cut':
      return retryAfter(fullJitterDelay(q.policy, q.attempt, q.random), 'transfer-cut');
    case 'short':
      return retryAfter(0, 'transfer-short');
    case 'part-outdated':
      return retryAfter(0, 'part-outdated');
  }
}

function decidePoll(q: PollFailed): RetryDecision {
  if (q.code !== undefined && FINAL_POLL_ERROR_CODES.has(q.code)) return giveUp('final-poll-error');
  // A passing fault (network, 5xx, 429): ask again later, further apart each time. The poller has no
  // retry budget: a wait ends when the media does, or at the caller's timeout.
  const intervals = Math.min(MAX_POLL_BACKOFF_INTERVALS, q.failures);
  return retryAfter(nextPollDelay(q.intervals, q.waitedMs, q.random) * intervals, 'poll-failed');
}

function retryAfter(afterMs: number, reason: RetryReason): RetryDecision {
  return { retry: true, afterMs, reason, spendsRetry: true };
}

function giveUp(reason: GiveUpReason): RetryDecision {
  return { retry: false, reason };
}
