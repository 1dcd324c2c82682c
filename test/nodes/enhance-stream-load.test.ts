// The enhance stream node under more than a microphone's pace, in Node-RED's runtime: 10 s of speech in
// one burst (as a file read in chunks, an exec node or a replayed recording sends it) comes out whole with
// the default backlog, through FINCH and LARK; a burst against a small backlog is refused past it; a flood
// of topics (each completed, or a format change per message) is held by the backlog too, and leaves
// nothing behind on the node's thread; a topic past the Streams setting is refused naming it.
import assert from 'node:assert/strict';
import { segmentalSiSdr } from '../../bench/quality-metrics';
import { openStreams, type OpenStreamView } from '../../src/stream/open-streams';
import { mix, whiteNoise } from '../enhance/test-media';
import { readSpeechSample } from '../enhance/speech-sample';
import { initHelper, stopHelper, unloadFlow, type FlowNode } from './flow-helper';
import { chunksOf, errorText, fromS16, joined, load, measuredLag, RATE, toS16, until, type Msg } from './stream-flow';

/** Sends every chunk at once, numbered, the last with msg.complete; resolves when each is sent or caught. */
async function burst(node: FlowNode, outputs: Msg[], errors: Msg[], chunks: Buffer[], extra: Msg = {}): Promise<void> {
  chunks.forEach((payload, index) =>
    node.receive({ payload, index, ...extra, ...(index === chunks.length - 1 ? { complete: true } : {}) }),
  );
  await until(() => outputs.length + errors.length >= chunks.length, 'every chunk sent or caught', 60_000);
}

function rowsOf(nodeId: string): OpenStreamView[] {
  return openStreams().filter((row) => row.nodeId === nodeId);
}

describe('nodes: enhance stream under load', function () {
  this.timeout(120_000);
  let clean: Float32Array;
  let noisy: Float32Array;
  let chunks: Buffer[];

  before(async () => {
    await initHelper();
    clean = (await readSpeechSample()).samples;
    noisy = mix(clean, whiteNoise(clean.length, 3), 5);
    chunks = chunksOf(toS16(noisy));
  });
  afterEach(() => unloadFlow());
  after(() => stopHelper());

  for (const model of ['FINCH', 'LARK'])
    it(`10 s of speech in one burst, default backlog (${model}): every chunk back, in order, with the stated latency, cleaner`, async () => {
      assert.ok(chunks.length >= 500, `${chunks.length} chunks of 20 ms`);
      const { stream: node, outputs, errors } = await load({ model });
      await burst(node, outputs, errors, chunks, { topic: 'replay' });
      assert.deepEqual(errors.map(errorText), [], 'nothing refused');
      assert.deepEqual(
        outputs.map((msg) => msg.index),
        chunks.map((_, i) => i),
        'one output per input, in order',
      );
      const latencyMs = outputs[0].latency as number;
      const latency = (latencyMs * RATE) / 1000;
      assert.ok(Number.isInteger(latency) && latencyMs > 0 && latencyMs <= 60, `latency ${latencyMs} ms`);
      outputs.forEach((msg, i) => {
        assert.equal(msg.latency, latencyMs, `output ${i}: the same latency`);
        const tail = i === chunks.length - 1 ? latency * 2 : 0;
        assert.equal((msg.payload as Buffer).length, chunks[i].length + tail, `output ${i}: as long as its input`);
      });
      const output = fromS16(joined(outputs));
      assert.equal(output.length, noisy.length + latency);
      assert.equal(measuredLag(noisy, output, 2 * latency), latency, 'msg.latency is where the output lines up');
      const enhanced = segmentalSiSdr(clean, output.subarray(latency), RATE);
      const input = segmentalSiSdr(clean, noisy, RATE);
      assert.ok(
        enhanced > input + 3,
        `segmental SI-SDR ${enhanced.toFixed(2)} dB out, ${input.toFixed(2)} dB in (${outputs.length} outputs for ${chunks.length} chunks)`,
      );
    });

  it('a burst faster than the backlog allows is refused past it, to Catch naming the stream and the wait; nothing is reordered', async () => {
    const { stream: node, outputs, errors } = await load({ backlog: '100' });
    await burst(node, outputs, errors, chunks, { topic: 'mic' });
    assert.ok(errors.length > 0, `10 s at once wait more than 100 ms (${outputs.length} sent)`);
    assert.ok(outputs.length > 0, 'the first chunks are taken');
    for (const msg of errors)
      assert.match(
        errorText(msg),
        /^stream "mic" would have this chunk wait \d+ ms for its thread \(the audio ahead of it, at this machine's measured speed\), more than the 100 ms that setting "Backlog \(ms of wait\)" allows: the chunk was refused/,
      );
    const sent = outputs.map((msg) => msg.index as number);
    assert.deepEqual(
      sent,
      [...sent].sort((a, b) => a - b),
      'in order',
    );
    const refused = new Set(errors.map((msg) => msg.index as number));
    assert.deepEqual(
      sent,
      chunks.map((_, i) => i).filter((i) => !refused.has(i)),
      'every chunk is sent or refused',
    );
    // Once the thread has caught up, the stream takes chunks again.
    const before = outputs.length;
    node.receive({ payload: chunks[0], topic: 'mic' });
    await until(() => outputs.length > before, 'a chunk after the burst');
  });

  it('a flood of topics, each a stream of one completed chunk, is held by the backlog and leaves nothing on the thread', async () => {
    const { stream: node, outputs, errors } = await load({ backlog: '200' });
    // One stream first: the memory a stream holds, and the one stream its thread holds.
    const probe = chunksOf(toS16(noisy.subarray(0, RATE)));
    const opened = async (topic: string) => {
      const count = outputs.length;
      for (const payload of probe.slice(0, 10)) node.receive({ payload, topic });
      await until(() => outputs.length === count + 10, `stream ${topic}`);
      return rowsOf('stream').find((row) => row.topic === topic)!;
    };
    const first = await opened('first');
    assert.equal(first.threadStreams, 1);
    node.receive({ topic: 'first', complete: true });
    await until(() => outputs.length === 11, 'the first stream ended');

    const flood = 1500;
    const sentBefore = outputs.length;
    const answered = () => outputs.length - sentBefore + errors.length;
    for (let i = 0; i < flood; i++)
      node.receive({ payload: chunks[i % chunks.length], topic: `t${i}`, complete: true });
    await until(() => answered() >= flood, 'every flooded chunk sent or caught', 60_000);
    assert.ok(
      errors.length > 0,
      `${flood} new streams at once wait more than 200 ms: the backlog holds for new topics too`,
    );
    for (const msg of errors)
      assert.match(errorText(msg), /^stream "t\d+" would have this chunk wait \d+ ms for its thread/);
    assert.deepEqual(rowsOf('stream'), [], 'every flooded stream ended');

    // A format change per message: each ends the stream before it.
    const formats = errors.length;
    for (let i = 0; i < 300; i++)
      node.receive({ payload: chunks[i], topic: 'switching', format: { rate: i % 2 === 0 ? 16000 : 48000 } });
    await until(() => answered() >= flood + 300, 'every switching chunk', 60_000);
    assert.ok(rowsOf('stream').length <= 1, 'at most the switching topic is open');
    // The reset reaches the thread before the next stream opens there: no wait needed between them.
    node.receive({ topic: 'switching', reset: true });

    const after = await opened('after');
    assert.equal(
      after.threadStreams,
      1,
      `the thread holds the new stream only (${errors.length - formats} switches refused)`,
    );
    // What a stream holds is its own: the same order as before the flood (its buffers grow with its groups).
    assert.ok(
      after.memoryBytes > 0 && after.memoryBytes <= 2 * first.memoryBytes,
      `${after.memoryBytes} bytes after, ${first.memoryBytes} before`,
    );
  });

  it('a topic past the Streams setting is refused naming it; one ended makes room', async () => {
    const { stream: node, outputs, errors } = await load({ maxStreams: '3' });
    for (const topic of ['a', 'b', 'c', 'd']) node.receive({ payload: chunks[0], topic });
    await until(() => outputs.length === 3 && errors.length === 1, 'three sent, one caught');
    assert.match(
      errorText(errors[0]),
      /^msg\.topic: starts a new stream, and 3 streams are open already, the most that setting "Streams \(most open\)" allows .*\(got "d"\)$/,
    );
    node.receive({ topic: 'a', complete: true });
    node.receive({ payload: chunks[1], topic: 'd' });
    await until(() => outputs.length === 5, 'd after a ended');
    assert.equal(errors.length, 1);
  });

  it('a topic past the Streams setting is refused for that setting even while the thread is busy', async () => {
    const { stream: node, errors } = await load({ maxStreams: '1', backlog: '20' });
    // Topic a fills its thread past the backlog (its later chunks are refused as a wait), then b comes.
    chunks.slice(0, 200).forEach((payload) => node.receive({ payload, topic: 'a' }));
    node.receive({ payload: chunks[0], topic: 'b' });
    await until(() => errors.some((msg) => msg.topic === 'b'), "b's chunk caught");
    const caught = errors.find((msg) => msg.topic === 'b')!;
    assert.match(errorText(caught), /^msg\.topic: starts a new stream, and 1 streams are open already/);
    assert.equal((caught.error as { code?: string }).code, 'VALIDATION');
  });

  it('a Streams setting out of range is named on deploy, and the node refuses chunks', async () => {
    const { stream: node, errors } = await load({ maxStreams: '0' });
    const logged = node.error.getCalls().map((call) => String(call.args[0]));
    assert.ok(
      logged.some((text) =>
        /setting "Streams \(most open\)": must be a whole number from 1 to 1000, or empty for the default \(got "0"\)/.test(
          text,
        ),
      ),
      logged.join(' | '),
    );
    node.receive({ payload: chunks[0] });
    await until(() => errors.length === 1, 'the chunk caught');
    assert.equal(errorText(errors[0]), 'invalid settings');
  });
});
