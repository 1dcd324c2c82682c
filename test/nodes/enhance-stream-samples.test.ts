// Nothing poisons a stream, in Node-RED's runtime, through FINCH and LARK: an f32le chunk holding NaN, an
// infinite sample or one far outside full scale is refused to Catch naming the stream, the chunk and the
// rule, and the stream goes on as if it never came; 16-bit chunks at full scale are audio and pass. A
// stream whose state turns non-finite on its own (made so here by writing NaN into a chunk on its way to
// the stream's thread, past the node's check) starts afresh at once: its outputs stay finite, the next
// chunks are audio again, and the status, the log and the sidebar's list say so.
import assert from 'node:assert/strict';
import { Worker, type Transferable } from 'node:worker_threads';
import { openStreams } from '../../src/stream/open-streams';
import type { ToStreamWorker } from '../../src/stream/stream-messages';
import { mix, whiteNoise } from '../enhance/test-media';
import { readSpeechSample } from '../enhance/speech-sample';
import { initHelper, statusTexts, stopHelper, unloadFlow } from './flow-helper';
import {
  CHUNK,
  chunksOf,
  errorText,
  fromF32,
  fromS16,
  joined,
  largestDifference,
  load,
  RATE,
  stream,
  toF32,
  toS16,
  until,
} from './stream-flow';

const F32 = { format: { encoding: 'f32le' } };

function energy(samples: Float32Array): number {
  return samples.reduce((sum, s) => sum + s * s, 0) / Math.max(1, samples.length);
}

/** A copy of an f32le chunk with `value` at `frame`. */
function spoiled(chunk: Buffer, frame: number, value: number): Buffer {
  const copy = Buffer.from(chunk);
  copy.writeFloatLE(value, frame * 4);
  return copy;
}

describe('nodes: enhance stream, samples that are not audio', function () {
  this.timeout(120_000);
  let speech: Float32Array;

  before(async () => {
    await initHelper();
    const clean = (await readSpeechSample()).samples.subarray(0, RATE * 2);
    speech = mix(clean, whiteNoise(clean.length, 5), 10);
  });
  afterEach(() => unloadFlow());
  after(() => stopHelper());

  for (const model of ['FINCH', 'LARK']) {
    it(`${model}: f32le chunks with NaN, infinity or a sample far past full scale are refused naming the stream, the chunk and the rule`, async () => {
      const { stream: node, outputs, errors } = await load({ model, backlog: '60000' });
      const chunks = chunksOf(toF32(speech), CHUNK * 4);
      const reference = joined(await stream(node, outputs, chunks, { topic: 'mic', ...F32 }));
      const bad: [number, number, RegExp][] = [
        [Number.NaN, 12, /frame 12, channel 1/],
        [Number.POSITIVE_INFINITY, 0, /has Infinity at frame 0, channel 1/],
        [Number.NEGATIVE_INFINITY, 319, /has -Infinity at frame 319, channel 1/],
        [1e6, 100, /has 1000000 at frame 100, channel 1/],
      ];
      const before = outputs.length;
      chunks.forEach((payload, i) => {
        // Each bad chunk comes in the place of a good one, which follows it.
        if (i >= 10 && i < 10 + bad.length) {
          const [value, frame] = bad[i - 10];
          node.receive({ payload: spoiled(payload, frame, value), topic: 'mic', ...F32 });
        }
        node.receive({ payload, topic: 'mic', ...F32, ...(i === chunks.length - 1 ? { complete: true } : {}) });
      });
      await until(() => outputs.length - before >= chunks.length && errors.length >= bad.length, 'outputs and errors');
      assert.equal(errors.length, bad.length);
      errors.forEach((msg, i) => {
        const text = errorText(msg);
        assert.match(
          text,
          new RegExp(
            `^msg\\.payload: must hold finite f32le samples within ±16 \\(full scale is ±1\\): chunk ${11 + 2 * i} of stream "mic" has `,
          ),
        );
        assert.match(text, bad[i][2]);
        assert.match(
          text,
          /so it was refused; the stream keeps its state and goes on with the next chunk \(got a Buffer of 1280 bytes\)$/,
        );
      });
      assert.match(errorText(errors[0]), /has NaN at frame 12/);
      const output = fromF32(joined(outputs.slice(before)));
      const difference = largestDifference(output, fromF32(reference));
      // LARK's output moves by float rounding with how its chunks were grouped (stream-flow.ts).
      assert.ok(
        difference <= (model === 'LARK' ? 1e-6 : 0),
        `the good chunks come out as if the bad ones never came (differ by ${difference})`,
      );
      assert.ok(output.every(Number.isFinite));
    });

    it(`${model}: a new stream's first chunk refused still takes its place: the chunks after it are numbered on from it`, async () => {
      const { stream: node, outputs, errors } = await load({ model, backlog: '60000' });
      const chunks = chunksOf(toF32(speech), CHUNK * 4);
      node.receive({ payload: spoiled(chunks[0], 0, Number.NaN), topic: 'fresh', ...F32 });
      node.receive({ payload: chunks[1], topic: 'fresh', ...F32 });
      node.receive({ payload: spoiled(chunks[2], 0, Number.NaN), topic: 'fresh', ...F32, complete: true });
      await until(() => outputs.length + errors.length >= 3, 'the three chunks sent or caught');
      assert.deepEqual(
        errors.map((msg) => /chunk (\d+) of stream/.exec(errorText(msg))?.[1]),
        ['1', '3'],
      );
    });

    it(`${model}: s16le chunks at full scale are audio: none is refused`, async () => {
      const { stream: node, outputs, errors } = await load({ model, backlog: '60000' });
      const loud = toS16(speech.map((s) => (s >= 0 ? 1 : -1)));
      const out = await stream(node, outputs, chunksOf(loud).slice(0, 50));
      assert.deepEqual(errors.map(errorText), []);
      assert.ok(energy(fromS16(joined(out))) > 0.01, 'the output is sound');
    });

    it(`${model}: a stream whose state turns non-finite starts afresh and says so; its next chunks are audio`, async () => {
      const { stream: node, outputs, errors } = await load({ model, encoding: 'f32le', backlog: '60000' });
      const chunks = chunksOf(toF32(speech), CHUNK * 4);
      const reference = fromF32(joined(await stream(node, outputs, chunks, { topic: 'reference' })));
      // Past the node's check, on the way to the stream's thread, the 30th chunk's samples become NaN: the
      // denoiser's state turns NaN as it would on its own (a 16-bit stream cannot be reached so: its thread
      // decodes integers; test/enhance/live-stream.test.ts corrupts such a stream's state directly).
      const poisonAt = 30;
      // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, and called on its worker
      const original = Worker.prototype.postMessage;
      let seen = 0;
      Worker.prototype.postMessage = function (
        this: Worker,
        message: ToStreamWorker,
        transfer?: readonly Transferable[],
      ) {
        if (message.type === 'chunk' && ++seen === poisonAt) new Float32Array(message.bytes).fill(Number.NaN);
        return original.call(this, message, transfer);
      };
      const before = outputs.length;
      try {
        chunks.forEach((payload) => node.receive({ payload, topic: 'mic' }));
        await until(() => outputs.length - before === chunks.length, 'every chunk');
      } finally {
        Worker.prototype.postMessage = original;
      }
      assert.deepEqual(errors.map(errorText), []);
      const output = fromF32(joined(outputs.slice(before)));
      assert.ok(output.every(Number.isFinite), 'every output sample is a number');
      // From a few chunks past the poisoned one, the fresh state gives the speech again.
      const from = (poisonAt + 3) * CHUNK;
      const ratio = energy(output.subarray(from)) / energy(reference.subarray(from, output.length));
      assert.ok(ratio > 0.5 && ratio < 2, `energy after the reset: ${ratio.toFixed(2)} of the stream's without it`);
      const text = 'reset stream "mic": its output turned non-finite (NaN or infinite), so its state started afresh';
      assert.ok(statusTexts(node).includes(text), statusTexts(node).join(' | '));
      assert.ok(
        node.warn.getCalls().some((call) => call.args[0] === text),
        'the log says so',
      );
      const [row] = openStreams().filter((r) => r.nodeId === 'stream' && r.topic === 'mic');
      assert.equal(row.resets, 1, "the sidebar's list says the stream's state started afresh once");
      assert.equal(outputs[before].latency, outputs[outputs.length - 1].latency, 'the latency stays');
    });
  }
});
