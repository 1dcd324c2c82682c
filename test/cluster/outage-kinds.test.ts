// How a failed call to the shared state is told apart: Redis's own error answer stands as it is (a fault
// in the call), anything that means no answer came becomes a SharedStateUnavailableError, which only
// http/ turns into 503 with Retry-After. Told by the error's class, never by words in its message.
import assert from 'node:assert/strict';
import { ReplyError } from 'ioredis';
import { isOutage, shared, SharedStateUnavailableError } from '../../src/engine/cluster/redis-connection';
import { PartUnavailableError } from '../../src/engine/part-unavailable';

const ready = { status: 'ready' } as const;
const failing = (err: Error) => () => Promise.reject(err);
/** ioredis types ReplyError as `any`: a Redis error answer, as ioredis rejects a call with it. */
const replyError = (message: string): Error => new (ReplyError as new (message: string) => Error)(message);

describe('cluster: what counts as the shared state being away', function () {
  it("passes on Redis's own error answer, whatever words it holds", async () => {
    // A script's error that happens to speak of a connection is still the script's error.
    const reply = replyError('ERR user_script:1: connection closed by the script');
    assert.equal(isOutage(reply), false);
    await assert.rejects(shared(ready, failing(reply)), (err) => err === reply);
  });

  it('takes a reply that says Redis cannot serve yet (LOADING) for an outage', async () => {
    const loading = replyError('LOADING Redis is loading the dataset in memory');
    assert.equal(isOutage(loading), true);
    await assert.rejects(shared(ready, failing(loading)), SharedStateUnavailableError);
  });

  it('takes any failure without an answer for an outage: timed out, closed, a socket error', async () => {
    const socket = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    for (const err of [new Error('Command timed out'), new Error('Connection is closed.'), socket]) {
      assert.equal(isOutage(err), true, err.message);
      await assert.rejects(shared(ready, failing(err)), (thrown) => {
        assert.ok(thrown instanceof SharedStateUnavailableError);
        assert.ok(thrown instanceof PartUnavailableError);
        assert.equal(thrown.retryAfterS, 5);
        assert.equal(thrown.detail, 'the service cannot reach its shared state (Redis) now; retry later');
        return true;
      });
    }
  });

  it('never takes a fault of the code for an outage, unless the connection is down anyway', async () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'connection')");
    assert.equal(isOutage(bug), false);
    await assert.rejects(shared(ready, failing(bug)), (err) => err === bug);
    await assert.rejects(shared({ status: 'reconnecting' }, failing(bug)), SharedStateUnavailableError);
  });
});
