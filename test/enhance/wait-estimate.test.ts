// The wait the enhance stream node holds under its backlog: a model's speed as answers measure it (alone,
// and in bursts), the audio waiting for each thread by stream, and whether a chunk joins its thread.
import assert from 'node:assert/strict';
import { DEFAULT_BACKLOG_MS } from '../../src/nodes/stream-settings';
import {
  admits,
  GROUP_MS,
  KNOWN_SPEEDS,
  machineSpeed,
  ModelSpeed,
  QUEUED_FROM_MS,
  ThreadBacklog,
} from '../../src/stream/wait-estimate';

const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual}, not ${expected}`);

describe('wait estimate', () => {
  it('starts from the prior, and a burst of answers brings each kind to what they measure', () => {
    const speed = new ModelSpeed({ alone: 0.5, queued: 0.25 });
    assert.deepEqual(speed.speeds, { alone: 0.5, queued: 0.25 });
    // 10 s of a burst, answered 20 ms at a time in groups of GROUP_MS, at 0.08 ms per ms.
    for (let i = 0; i < 500; i++) speed.observe(1.6, 20, GROUP_MS);
    assert.ok(Math.abs(speed.speeds.queued - 0.08) < 0.001, `queued ${speed.speeds.queued}`);
    assert.equal(speed.speeds.alone, 0.5, 'chunks alone are not measured by a burst');
    // A live source's chunks, one at a time.
    for (let i = 0; i < 500; i++) speed.observe(4, 20, 20);
    assert.ok(Math.abs(speed.speeds.alone - 0.2) < 0.001, `alone ${speed.speeds.alone}`);
  });

  it('weighs an answer by its audio: one chunk of 20 ms moves the estimate by a fiftieth of the way', () => {
    const speed = new ModelSpeed({ alone: 1, queued: 1 });
    speed.observe(0, 20, 20);
    close(speed.speeds.alone, 0.98, 'after one 20 ms chunk costing nothing');
    speed.observe(0, 5000, GROUP_MS);
    close(speed.speeds.queued, 0, 'an answer of more than a second of audio replaces the estimate');
  });

  it('takes no measure from an answer without audio or with a time that is not a number', () => {
    const speed = new ModelSpeed({ alone: 0.3, queued: 0.1 });
    for (const [busy, audio] of [
      [5, 0],
      [Number.NaN, 20],
      [-1, 20],
      [Number.POSITIVE_INFINITY, 20],
    ])
      speed.observe(busy, audio, GROUP_MS);
    assert.deepEqual(speed.speeds, { alone: 0.3, queued: 0.1 });
  });

  it("values each stream's first part as chunks alone and the rest as a burst", () => {
    const speed = new ModelSpeed({ alone: 0.5, queued: 0.25 });
    const backlog = new ThreadBacklog();
    backlog.add(1, 10, 1, 10_000);
    const one = backlog.waiting(1);
    assert.deepEqual(one, { aloneMs: QUEUED_FROM_MS, queuedMs: 10_000 - QUEUED_FROM_MS });
    close(speed.waitMs(one), QUEUED_FROM_MS * 0.5 + (10_000 - QUEUED_FROM_MS) * 0.25, 'a burst of 10 s');
    // A flood: streams of one 20 ms chunk each run alone.
    for (let s = 100; s < 200; s++) backlog.add(2, s, 1, 20);
    close(speed.waitMs(backlog.waiting(2)), 100 * 20 * 0.5, 'a hundred streams of 20 ms');
    // Two channels: the first part is as long in time, twice the audio per channel.
    backlog.add(3, 300, 2, 1000);
    assert.deepEqual(backlog.waiting(3), { aloneMs: 2 * QUEUED_FROM_MS, queuedMs: 1000 - 2 * QUEUED_FROM_MS });
  });

  it('follows chunks in and out per thread and stream, and forgets a thread with nothing waiting', () => {
    const backlog = new ThreadBacklog();
    assert.equal(backlog.busy(1), false);
    for (let i = 0; i < 3; i++) backlog.add(1, 7, 1, 0.02 * 1000);
    backlog.add(1, 8, 1, 40);
    backlog.add(2, 9, 1, 20);
    assert.deepEqual(backlog.busyThreads(), [1, 2]);
    assert.deepEqual(backlog.waiting(1), { aloneMs: 100, queuedMs: 0 });
    for (let i = 0; i < 3; i++) backlog.done(7, 0.02 * 1000);
    assert.deepEqual(backlog.waiting(1), { aloneMs: 40, queuedMs: 0 });
    backlog.done(8, 40);
    backlog.done(8, 40); // a stream no longer waiting: nothing happens
    assert.equal(backlog.busy(1), false);
    assert.deepEqual(backlog.waiting(1), { aloneMs: 0, queuedMs: 0 });
    assert.deepEqual(backlog.busyThreads(), [2]);
    // Many fractions of a ms in and out leave nothing behind.
    for (let i = 0; i < 10_000; i++) backlog.add(3, 10, 1, 1000 / 3);
    for (let i = 0; i < 10_000; i++) backlog.done(10, 1000 / 3);
    assert.equal(backlog.busy(3), false);
  });

  it('judges a chunk with what its stream already has waiting', () => {
    const backlog = new ThreadBacklog();
    backlog.add(1, 5, 1, QUEUED_FROM_MS);
    assert.deepEqual(backlog.waiting(1, { stream: 5, channels: 1, ms: 20 }), { aloneMs: QUEUED_FROM_MS, queuedMs: 20 });
    assert.deepEqual(backlog.waiting(1, { stream: 6, channels: 1, ms: 20 }), {
      aloneMs: QUEUED_FROM_MS + 20,
      queuedMs: 0,
    });
  });

  it('lets a chunk join a thread with nothing waiting whatever the limit, and one that keeps the wait within it', () => {
    const speed = new ModelSpeed({ alone: 1, queued: 0.5 });
    assert.equal(admits(speed, false, { aloneMs: 20_000, queuedMs: 0 }, 100), true);
    assert.equal(admits(speed, true, { aloneMs: 100, queuedMs: 0 }, 100), true);
    assert.equal(admits(speed, true, { aloneMs: 100, queuedMs: 2 }, 100), false);
    assert.equal(admits(speed, true, { aloneMs: 60, queuedMs: 80 }, 100), true);
  });

  it("shares each model's speed across the process, from its known cost", () => {
    assert.equal(machineSpeed('LARK'), machineSpeed('LARK'));
    assert.notEqual(machineSpeed('LARK'), machineSpeed('FINCH'));
    for (const model of ['FINCH', 'LARK'] as const) {
      const known = KNOWN_SPEEDS[model];
      assert.ok(known.queued <= known.alone, `${model}: a burst costs no more than chunks alone`);
    }
    // The default backlog takes a 10 s burst whole before any answer (stream-settings.ts says why).
    const burst = new ThreadBacklog();
    burst.add(1, 1, 1, 10_600);
    assert.ok(new ModelSpeed(KNOWN_SPEEDS.LARK).waitMs(burst.waiting(1)) < DEFAULT_BACKLOG_MS);
  });
});
