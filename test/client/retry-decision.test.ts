import assert from 'node:assert/strict';
import type { RetryPolicy } from '../../src/client/backoff';
import type { PollIntervals } from '../../src/client/poll-intervals';
import {
  decideRetry,
  type DownloadFailed,
  type DownloadFailure,
  type GiveUpReason,
  type RequestFailed,
  type RequestFailure,
  type RetryDecision,
  type RetryQuestion,
  type RetryReason,
} from '../../src/client/retry-decision';

// Jitter ceilings with this policy: 100, 200, 400, 800, then 1000 ms; a fixed random of 0.5 waits half of it.
const policy: RetryPolicy = { maxRetries: 3, unreachableForMs: 10_000, baseDelayMs: 100, maxDelayMs: 1_000 };
const intervals: PollIntervals = { initialMs: [3_000, 5_000], longMs: [5_000, 10_000], longAfterMs: 60_000 };
const half = () => 0.5;

function get(failure: RequestFailure, history: Partial<RequestFailed> = {}): RequestFailed {
  return {
    loop: 'request',
    failure,
    idempotent: true,
    replayable: true,
    attempt: 0,
    retries: 0,
    policy,
    random: half,
    ...history,
  };
}

function post(failure: RequestFailure, history: Partial<RequestFailed> = {}): RequestFailed {
  return get(failure, { idempotent: false, ...history });
}

function status(code: number, said: { retryAfterMs?: number; windowFreesInMs?: number } = {}): RequestFailure {
  return { kind: 'status', status: code, retryAfterMs: said.retryAfterMs, windowFreesInMs: said.windowFreesInMs ?? 0 };
}

function refused(refusedForMs: number): RequestFailure {
  return { kind: 'connection', code: 'ECONNREFUSED', refusedForMs };
}

function download(failure: DownloadFailure, attempt: number): DownloadFailed {
  return { loop: 'download', failure, attempt, policy, random: half };
}

function retry(afterMs: number, reason: RetryReason, spendsRetry = true): RetryDecision {
  return { retry: true, afterMs, reason, spendsRetry };
}

function giveUp(reason: GiveUpReason): RetryDecision {
  return { retry: false, reason };
}

const cases: [string, RetryQuestion, RetryDecision][] = [
  // What the service said
  [
    '429 with Retry-After: waits as asked, then the jitter',
    get(status(429, { retryAfterMs: 2_000 })),
    retry(2_050, 'rate-limited'),
  ],
  [
    '429 whose window frees after its Retry-After: waits for the window',
    post(status(429, { retryAfterMs: 1_000, windowFreesInMs: 3_000 }), { retries: 1 }),
    retry(3_100, 'rate-limited'),
  ],
  [
    '503 with Retry-After: the window does not count, it is not a rate limit',
    get(status(503, { retryAfterMs: 1_500, windowFreesInMs: 9_000 })),
    retry(1_550, 'retryable-status'),
  ],
  [
    '503 to a POST: the service did nothing, sent again',
    post(status(503), { retries: 2 }),
    retry(200, 'retryable-status'),
  ],
  ['507 to a POST: the service did nothing, sent again', post(status(507)), retry(50, 'retryable-status')],
  ['500 to a GET: sent again', get(status(500)), retry(50, 'retryable-status')],
  ['500 to a POST: the service may have acted on it', post(status(500)), giveUp('unsafe-to-resend')],
  ['404: asking again cannot help', get(status(404)), giveUp('final-status')],
  ['401: asking again cannot help', post(status(401)), giveUp('final-status')],
  ['422: asking again cannot help', post(status(422)), giveUp('final-status')],
  [
    'the jitter ceiling stops at maxDelayMs',
    get(status(503), { retries: 10, policy: { ...policy, maxRetries: 20 } }),
    retry(500, 'retryable-status'),
  ],

  // Refused connections: tried for a time, not a number of retries
  [
    'ECONNREFUSED within unreachableForMs, retries spent: tried again without spending one',
    post(refused(9_999), { attempt: 7, retries: 3 }),
    retry(400, 'connection-refused', false),
  ],
  [
    'ECONNREFUSED once unreachableForMs has passed',
    get(refused(10_000), { attempt: 7 }),
    giveUp('unreachable-too-long'),
  ],
  [
    'ECONNREFUSED with maxRetries 0: never retried',
    get(refused(0), { policy: { ...policy, maxRetries: 0 } }),
    giveUp('retries-spent'),
  ],
  ['ECONNREFUSED with a one-shot body', post(refused(0), { replayable: false }), giveUp('not-replayable')],

  // Other connection failures
  [
    'a host not found for a POST: it was never sent',
    post({ kind: 'connection', code: 'ENOTFOUND', refusedForMs: 0 }),
    retry(50, 'not-sent'),
  ],
  [
    'a reset GET',
    get({ kind: 'connection', code: 'ECONNRESET', refusedForMs: 0 }, { retries: 1 }),
    retry(100, 'connection-failed'),
  ],
  [
    'a reset POST: the service may have it',
    post({ kind: 'connection', code: 'ECONNRESET', refusedForMs: 0 }),
    giveUp('unsafe-to-resend'),
  ],

  // The answer lost while it was read
  ['body-read failure on a GET: asked again', get({ kind: 'answer-lost' }), retry(50, 'answer-lost')],
  [
    'body-read failure on a POST: the service may have done it',
    post({ kind: 'answer-lost' }),
    giveUp('unsafe-to-resend'),
  ],

  // Budget
  ['503 once maxRetries are spent', get(status(503), { attempt: 3, retries: 3 }), giveUp('retries-spent')],
  ['429 once maxRetries are spent', post(status(429, { retryAfterMs: 1 }), { retries: 3 }), giveUp('retries-spent')],
  [
    'body-read failure once maxRetries are spent',
    get({ kind: 'answer-lost' }, { retries: 3 }),
    giveUp('retries-spent'),
  ],
  ['a one-shot body after 503: not sent again', post(status(503), { replayable: false }), giveUp('not-replayable')],
  [
    'a one-shot body after 503 with retries spent: the budget is the reason',
    post(status(503), { replayable: false, retries: 3 }),
    giveUp('retries-spent'),
  ],

  // A download to a file
  ['a body cut mid-way: resumed after the jitter of its attempt', download('cut', 2), retry(200, 'transfer-cut')],
  ['a body cut on the last attempt', download('cut', 3), giveUp('retries-spent')],
  ['a body shorter than announced: asked again at once', download('short', 0), retry(0, 'transfer-short')],
  ['a kept part longer than the file: started over at once', download('part-outdated', 1), retry(0, 'part-outdated')],
  ['a disk that fails: resuming cannot help', download('disk', 0), giveUp('disk-failed')],

  // The status poller: no budget, further apart each failure, up to four intervals
  [
    'a first failed poll waits one interval',
    { loop: 'poll', code: 'NETWORK', failures: 1, waitedMs: 0, intervals, random: half },
    retry(4_000, 'poll-failed'),
  ],
  [
    'a sixth failed poll in a long wait waits four long intervals',
    { loop: 'poll', code: 'RATE_LIMITED', failures: 6, waitedMs: 120_000, intervals, random: half },
    retry(30_000, 'poll-failed'),
  ],
  [
    'a poll failing with something other than a client error is asked again',
    { loop: 'poll', failures: 2, waitedMs: 0, intervals, random: half },
    retry(8_000, 'poll-failed'),
  ],
  [
    'a poll of a media the service does not know',
    { loop: 'poll', code: 'NOT_FOUND', failures: 1, waitedMs: 0, intervals, random: half },
    giveUp('final-poll-error'),
  ],
  [
    'a poll refused for its key',
    { loop: 'poll', code: 'AUTH', failures: 1, waitedMs: 0, intervals, random: half },
    giveUp('final-poll-error'),
  ],
];

describe('decideRetry', () => {
  for (const [name, question, expected] of cases) {
    it(name, () => {
      assert.deepEqual(decideRetry(question), expected);
    });
  }

  it('draws a random number only for a wait with jitter, so the loops draw as many as they wait', () => {
    let draws = 0;
    const counting = () => {
      draws++;
      return 0.5;
    };
    decideRetry({ ...get(status(404)), random: counting });
    decideRetry({ ...get(status(503), { retries: 3 }), random: counting });
    decideRetry({ ...download('short', 0), random: counting });
    assert.equal(draws, 0);
    decideRetry({ ...get(status(503)), random: counting });
    assert.equal(draws, 1);
  });
});
