// The enhance stream node in Node-RED's runtime: real speech with real noise in 20 ms chunks of raw PCM
// through a flow, as a microphone node sends them. One output per input and as long, msg.latency equal to
// the alignment measured on the joined output, the quality of the same model run over the whole file,
// independent topics, every kind of bad chunk named and skipped, complete, reset, and a redeploy.
import assert from 'node:assert/strict';
import { segmentalSiSdr } from '../../bench/quality-metrics';
import { ChannelDenoiser } from '../../src/enhance/channel-denoiser';
import { loadRnnoise } from '../../src/enhance/rnnoise';
import { LarkDenoiser } from '../../src/stream/lark-denoiser';
import { mix, whiteNoise } from '../enhance/test-media';
import { readSpeechSample } from '../enhance/speech-sample';
import { openStreams } from '../../src/stream/open-streams';
import { helper, initHelper, sleep, statusTexts, stopHelper, unloadFlow, type FlowNode } from './flow-helper';
import {
  chunksOf,
  flow,
  fromS16,
  joined,
  largestDifference,
  load as loadFlow,
  measuredLag,
  RATE,
  stream,
  toS16,
  until,
  CHUNK,
  type Msg,
} from './stream-flow';

/** Chunks come faster than real time in these tests: the backlog allows a minute unless a test sets it. */
function load(settings: Msg = { backlog: '60000' }): Promise<{ stream: FlowNode; outputs: Msg[]; errors: Msg[] }> {
  return loadFlow(settings);
}

describe('nodes: enhance stream', function () {
  this.timeout(120_000);
  let clean: Float32Array;
  let noisy: Float32Array;
  let noisyBytes: Buffer;

  before(async () => {
    await initHelper();
    clean = (await readSpeechSample()).samples;
    noisy = mix(clean, whiteNoise(clean.length, 3), 5);
    noisyBytes = toS16(noisy);
  });
  afterEach(() => unloadFlow());
  after(() => stopHelper());

  it('real speech in 20 ms chunks: one output per input, as long, the latency measured to the sample, the quality of the whole file', async () => {
    const { stream: node, outputs, errors } = await load();
    const chunks = chunksOf(noisyBytes);
    const out = await stream(node, outputs, chunks, { topic: 'mic', _extra: 'kept' });
    assert.deepEqual(errors, []);
    assert.equal(out.length, chunks.length);
    const latencyMs = out[0].latency as number;
    const latency = (latencyMs * RATE) / 1000;
    assert.ok(Number.isInteger(latency) && latencyMs >= 10 && latencyMs <= 50, `latency ${latencyMs} ms`);
    out.forEach((msg, i) => {
      const expected = chunks[i].length + (i === chunks.length - 1 ? latency * 2 : 0);
      assert.equal((msg.payload as Buffer).length, expected, `output ${i}: as long as its input`);
      assert.equal(msg.latency, latencyMs);
      assert.equal(msg.topic, 'mic');
      assert.equal(msg._extra, 'kept', 'other properties pass through');
    });
    const output = fromS16(joined(out));
    assert.equal(output.length, noisy.length + latency);
    assert.equal(measuredLag(noisy, output, 2 * latency), latency, 'msg.latency is where the output lines up');

    // The same model over the whole file at once (the file chain's RNNoise, without its high-pass).
    const denoiser = await ChannelDenoiser.create(await loadRnnoise(), RATE, 1);
    const whole = new Float32Array(noisy.length);
    const first = denoiser.push(noisy, noisy.length).slice();
    whole.set(first);
    whole.set(denoiser.flush(), first.length);
    denoiser.destroy();
    const streamed = segmentalSiSdr(clean, output.subarray(latency), RATE);
    const reference = segmentalSiSdr(clean, whole, RATE);
    const input = segmentalSiSdr(clean, noisy, RATE);
    assert.ok(streamed > input + 3, `enhanced: ${streamed.toFixed(2)} dB against ${input.toFixed(2)} dB noisy`);
    assert.ok(
      Math.abs(streamed - reference) <= 0.5,
      `streamed ${streamed.toFixed(2)} dB, whole file ${reference.toFixed(2)} dB`,
    );
  });

  it('LARK (DeepFilterNet3, stateful) in 20 ms chunks: the latency measured to the sample, the quality of the whole file', async () => {
    const { stream: node, outputs, errors } = await load({ model: 'LARK', backlog: '60000' });
    const seconds = 4;
    const input = noisy.subarray(0, RATE * seconds);
    const out = await stream(node, outputs, chunksOf(toS16(input)));
    assert.deepEqual(errors, []);
    const latency = ((out[0].latency as number) * RATE) / 1000;
    assert.ok(Number.isInteger(latency) && (out[0].latency as number) <= 60, `latency ${String(out[0].latency)} ms`);
    const output = fromS16(joined(out));
    assert.equal(output.length, input.length + latency);
    assert.equal(measuredLag(input, output, 2 * latency), latency, 'msg.latency is where the output lines up');
    const denoiser = await LarkDenoiser.create(RATE, 100, 'auto');
    const whole = new Float32Array(input.length);
    const first = (await denoiser.push(input, input.length)).slice();
    whole.set(first);
    whole.set(await denoiser.flush(), first.length);
    denoiser.destroy();
    const reference = clean.subarray(0, input.length);
    const streamed = segmentalSiSdr(reference, output.subarray(latency), RATE);
    const wholeFile = segmentalSiSdr(reference, whole, RATE);
    assert.ok(
      Math.abs(streamed - wholeFile) <= 0.5,
      `streamed ${streamed.toFixed(2)} dB, whole file ${wholeFile.toFixed(2)} dB`,
    );
  });

  // LARK: two streams on one thread run the network as one batch (src/enhance/dfn-model.ts), each stream's
  // waiting chunks as one group (stream-worker.ts).
  for (const model of ['FINCH', 'LARK'])
    it(`two topics interleaved give the same outputs as each alone (${model})`, async () => {
      const { stream: node, outputs } = await load({ model, backlog: '60000' });
      const a = chunksOf(noisyBytes.subarray(0, RATE * 2 * 3));
      const b = chunksOf(toS16(mix(clean, whiteNoise(clean.length, 9), 0)).subarray(RATE * 2 * 2, RATE * 2 * 5));
      const alone = [
        joined(await stream(node, outputs, a, { topic: 'a' })),
        joined(await stream(node, outputs, b, { topic: 'b' })),
      ];
      const before = outputs.length;
      for (let i = 0; i < a.length; i++) {
        node.receive({ topic: 'a', payload: a[i], complete: i === a.length - 1 });
        node.receive({ topic: 'b', payload: b[i], complete: i === b.length - 1 });
      }
      await until(() => outputs.length - before >= a.length + b.length, 'both streams');
      const together = outputs.slice(before);
      for (const [topic, expected] of [
        ['a', alone[0]],
        ['b', alone[1]],
      ] as const)
        // LARK: a sample may round to the next 16-bit step when its chunks ran in other groups.
        assert.ok(
          largestDifference(fromS16(joined(together.filter((m) => m.topic === topic))), fromS16(expected)) <=
            (model === 'LARK' ? 1 / 32768 : 0),
          `topic ${topic}`,
        );
    });

  it('bad chunks go to Catch naming the property, the value and the rule; the stream keeps its state', async () => {
    const { stream: node, outputs, errors } = await load();
    const chunks = chunksOf(noisyBytes.subarray(0, RATE * 2));
    const reference = joined(await stream(node, outputs, chunks));
    const bad: [Msg, RegExp][] = [
      [{ payload: 'not audio' }, /msg\.payload: must be a Buffer of raw PCM samples \(got "not audio"\)/],
      [
        { payload: Buffer.alloc(641) },
        /msg\.payload: must hold a whole number of frames: 2 bytes each .*got a Buffer of 641 bytes/,
      ],
      [
        { payload: chunks[0], format: { encoding: 's24le' } },
        /msg\.format\.encoding: must be one of s16le, f32le \(got "s24le"\)/,
      ],
      [
        { payload: chunks[0], format: { rate: 96000 } },
        /msg\.format\.rate: must be a whole number of Hz from 8000 to 48000 \(got 96000\)/,
      ],
      [{ payload: chunks[0], format: { channels: 3 } }, /msg\.format\.channels: must be 1 or 2 \(got 3\)/],
    ];
    const before = outputs.length;
    for (let i = 0; i < chunks.length; i++) {
      if (i > 0 && i <= bad.length) node.receive(bad[i - 1][0]);
      node.receive({ payload: chunks[i], complete: i === chunks.length - 1 });
    }
    await until(() => outputs.length - before >= chunks.length && errors.length >= bad.length, 'outputs and errors');
    await sleep(100);
    assert.equal(outputs.length - before, chunks.length, 'nothing is sent for a bad chunk');
    assert.ok(joined(outputs.slice(before)).equals(reference), 'the good chunks go on as if the bad never came');
    assert.equal(errors.length, bad.length);
    errors.forEach((msg, i) => assert.match((msg.error as { message: string }).message, bad[i][1]));
  });

  it('msg.complete ends a stream with its tail, the next chunk starts a new one; msg.reset drops it', async () => {
    const { stream: node, outputs } = await load();
    const chunks = chunksOf(noisyBytes.subarray(0, RATE));
    const first = await stream(node, outputs, chunks);
    const latency = ((first[0].latency as number) * RATE) / 1000;
    assert.equal(joined(first).length, (RATE / 2 + latency) * 2);
    const again = await stream(node, outputs, chunks);
    assert.ok(joined(again).equals(joined(first)), 'a new stream after complete: the same output again');

    // Half a stream, reset, then the whole: as if the half had never been.
    for (const payload of chunks.slice(0, 10)) node.receive({ payload });
    await until(() => outputs.length >= first.length * 2 + 10, 'the half stream');
    const listed = openStreams().filter((row) => row.nodeId === 'stream');
    assert.equal(listed.length, 1, 'the sidebar lists the open stream');
    assert.deepEqual(
      { topic: listed[0].topic, rate: listed[0].rate, model: listed[0].model, latencyMs: listed[0].latencyMs },
      { topic: '', rate: RATE, model: 'FINCH', latencyMs: first[0].latency },
    );
    node.receive({ reset: true });
    assert.deepEqual(
      openStreams().filter((row) => row.nodeId === 'stream'),
      [],
      'a reset stream is no longer listed',
    );
    const after = await stream(node, outputs, chunks);
    assert.ok(joined(after).equals(joined(first)), 'after reset the stream starts afresh');
    // A complete message without a payload carries only the tail.
    const count = outputs.length;
    for (const payload of chunks.slice(0, 5)) node.receive({ payload });
    node.receive({ complete: true });
    await until(() => outputs.length === count + 6, 'five chunks and the end');
    assert.equal((outputs[count + 5].payload as Buffer).length, latency * 2, 'the end carries the tail alone');
  });

  it('a format change or a gap longer than the setting starts the stream afresh, and the status says so', async () => {
    const { stream: node, outputs } = await load({ gap: '0.3', backlog: '60000' });
    const chunks = chunksOf(noisyBytes.subarray(0, RATE));
    node.receive({ payload: chunks[0] });
    await until(() => outputs.length === 1, 'one output');
    await sleep(500);
    node.receive({ payload: chunks[1] });
    await until(() => outputs.length === 2, 'two outputs');
    // After the gap the stream started again: its output starts with silence once more.
    assert.ok(fromS16(outputs[1].payload as Buffer).every((s) => s === 0));
    const f32 = Buffer.from(new Float32Array(160).fill(0.1).buffer);
    node.receive({ payload: f32, format: { encoding: 'f32le' } });
    await until(() => outputs.length === 3, 'three outputs');
    assert.equal((outputs[2].payload as Buffer).length, f32.length);
    await sleep(600);
    const texts = statusTexts(node);
    // Idle past the gap, the stream ended by itself before the next chunk started it afresh.
    assert.ok(texts.includes('ended the default stream: idle longer than the gap'), texts.join(' | '));
    assert.ok(texts.includes('restarted the default stream: its format changed'), texts.join(' | '));
  });

  it('16-bit in gives 16-bit out, clipped where the enhanced sound passes full scale', async () => {
    const { stream: node, outputs } = await load();
    // Speech driven to full scale: the denoised sound overshoots it.
    const loud = toS16(clean.map((s) => s * 20).subarray(0, RATE * 3));
    const asFloat = Buffer.from(fromS16(loud).buffer);
    const int16 = fromS16(joined(await stream(node, outputs, chunksOf(loud), { topic: 's16' })));
    const floats = joined(
      await stream(node, outputs, chunksOf(asFloat, CHUNK * 4), { topic: 'f32', format: { encoding: 'f32le' } }),
    );
    const float = new Float32Array(floats.buffer, floats.byteOffset, floats.length / 4);
    assert.equal(int16.length, float.length);
    assert.ok(
      float.some((s) => Math.abs(s) > 1),
      'the enhanced sound passes full scale',
    );
    for (let i = 0; i < float.length; i++) {
      const expected = Math.max(-32768, Math.min(32767, Math.round(float[i] * 32768)));
      assert.equal(Math.round(int16[i] * 32768) + 0, expected + 0, `sample ${i}: rounded, clipped to the 16-bit range`);
    }
  });

  it('a redeploy ends the streams: their chunks are done and nothing is sent after close', async () => {
    const { stream: node, outputs } = await load();
    const chunks = chunksOf(noisyBytes);
    for (const payload of chunks) node.receive({ payload, topic: 'long' });
    await helper.setFlows(flow({ name: 'changed' }), 'nodes');
    const atClose = outputs.length;
    await sleep(1500);
    assert.equal(outputs.length, atClose, 'nothing sent after close');
    assert.ok(atClose < chunks.length, `${atClose} of ${chunks.length} went out before the redeploy`);
  });
});
