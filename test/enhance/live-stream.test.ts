// A live stream against the same denoiser run over the whole signal at once: chunked in 20 ms or in
// odd sizes, every chunk gives back as many samples as it brought, the joined output is the input's
// length plus the latency, and past the latency it is the whole-signal output sample for sample. A
// stream whose state turns non-finite (NaN pushed past the node's check, straight into its denoisers)
// starts afresh in step: its output stays finite, and from the restart on it is a fresh stream's.
import assert from 'node:assert/strict';
import { ChannelDenoiser } from '../../src/enhance/channel-denoiser';
import { loadRnnoise } from '../../src/enhance/rnnoise';
import { LarkDenoiser } from '../../src/stream/lark-denoiser';
import { enhanceChunk, enhanceChunks } from '../../src/stream/chunk-work';
import { LiveStream, type StreamSettings } from '../../src/stream/live-stream';
import { decodePcm, encodePcm, type PcmEncoding, type PcmFormat } from '../../src/stream/pcm-format';
import { readSpeechSample, seededNoise } from '../enhance/speech-sample';

/** The same denoiser over the whole signal in one push. */
async function wholeSignal(settings: StreamSettings, input: Float32Array): Promise<Float32Array> {
  const denoiser =
    settings.model === 'LARK'
      ? await LarkDenoiser.create(settings.rate, settings.level, 'auto')
      : await ChannelDenoiser.create(await loadRnnoise(), settings.rate, settings.level / 100);
  const out = new Float32Array(input.length);
  const first = (await denoiser.push(input, input.length)).slice();
  out.set(first);
  out.set(await denoiser.flush(), first.length);
  denoiser.destroy();
  return out;
}

async function chunked(settings: StreamSettings, input: Float32Array, sizes: () => number) {
  const stream = await LiveStream.create(settings);
  const parts: Float32Array[] = [];
  for (let at = 0; at < input.length;) {
    const n = Math.min(sizes(), input.length - at);
    const chunk = input.subarray(at, at + n);
    at += n;
    const out = at < input.length ? await stream.push([chunk], n) : await stream.end([chunk], n);
    assert.equal(out[0].length, at < input.length ? n : n + stream.latency);
    parts.push(out[0]);
  }
  stream.destroy();
  const joined = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return { joined, latency: stream.latency };
}

describe('live stream (FINCH, LARK)', function () {
  this.timeout(120_000);
  let speech: Float32Array;
  before(async () => {
    const { samples } = await readSpeechSample();
    const noise = seededNoise(7);
    speech = samples.map((s) => s + 0.02 * noise());
  });

  for (const [model, rate] of [
    ['FINCH', 16000],
    ['FINCH', 48000],
    ['FINCH', 44100],
    ['FINCH', 8000],
    ['LARK', 16000],
    ['LARK', 48000],
  ] as const) {
    it(`${model} at ${rate} Hz: equal lengths, the latency in silence first, then the whole-signal output`, async () => {
      const settings: StreamSettings = { rate, channels: 1, model, level: 100 };
      // The sample is 16 kHz; other rates take it as it is (the denoiser does not mind).
      const input = speech.subarray(0, Math.min(speech.length, rate * 3));
      const reference = await wholeSignal(settings, input);
      const random = seededNoise(rate);
      for (const sizes of [() => rate / 50, () => 1 + Math.floor(((random() + 1) / 2) * rate * 0.05)]) {
        const { joined, latency } = await chunked(settings, input, sizes);
        if (rate % 1000 === 0) assert.equal(latency % (rate / 1000), 0, 'a whole number of milliseconds');
        assert.equal(joined.length, input.length + latency);
        assert.ok(
          joined.subarray(0, latency).every((s) => s === 0),
          'silence first',
        );
        let worst = 0;
        for (let i = 0; i < input.length; i++) worst = Math.max(worst, Math.abs(joined[latency + i] - reference[i]));
        assert.ok(worst < 1e-6, `past the latency, the whole-signal output (differs by ${worst})`);
      }
    });
  }

  for (const model of ['FINCH', 'LARK'] as const)
    for (const encoding of ['s16le', 'f32le'] as PcmEncoding[])
      it(`${model}, ${encoding}: a state turned non-finite starts afresh in step, the output finite, then a fresh stream's`, async () => {
        const rate = 16000;
        const format: PcmFormat = { rate, channels: 1, encoding };
        const settings: StreamSettings = { rate, channels: 1, model, level: 100 };
        const chunk = rate / 50;
        const input = speech.subarray(0, rate * 2);
        const bytesOf = (from: number) => encodePcm([input.subarray(from, from + chunk)], chunk, format);
        const live = await LiveStream.create(settings);
        const outputs: Buffer[] = [];
        let fed = 0;
        let restartedAt = -1;
        for (let at = 0; at < input.length; at += chunk) {
          const resets = live.resets;
          if (at === 20 * chunk) {
            // Below the node's sample check: its denoisers' state turns NaN, as a state can on its own.
            const poison = new Float32Array(chunk).fill(Number.NaN);
            outputs.push(encodePcm(await live.push([poison], chunk), chunk, format));
            fed += chunk;
            if (live.resets > resets) restartedAt = fed;
          }
          const before = live.resets;
          outputs.push(await enhanceChunk(live, bytesOf(at), format, at + chunk >= input.length));
          fed += chunk;
          if (live.resets > before && restartedAt < 0) restartedAt = fed;
        }
        live.destroy();
        assert.equal(live.resets, 1, 'started afresh once');
        assert.ok(restartedAt > 0 && restartedAt <= 23 * chunk, `at sample ${restartedAt}`);
        const output = Buffer.concat(outputs);
        const samples = decodePcm(output, format)[0];
        assert.equal(samples.length, fed + live.latency, 'one output sample per input sample, plus the latency');
        assert.ok(samples.every(Number.isFinite), 'every output sample is a number');

        // A fresh stream given the input from the restart on (past the poison: one chunk less of the
        // stream's input), in the same chunks: the same output, in step.
        const fresh = await LiveStream.create(settings);
        const rest: Buffer[] = [];
        for (let at = restartedAt - chunk; at < input.length; at += chunk)
          rest.push(...(await enhanceChunks(fresh, [bytesOf(at)], format, at + chunk >= input.length)));
        fresh.destroy();
        const bytes = encoding === 's16le' ? 2 : 4;
        assert.ok(
          output
            .subarray((restartedAt + live.latency) * bytes)
            .equals(Buffer.concat(rest).subarray(live.latency * bytes)),
          "from the restart on, a fresh stream's output",
        );
      });

  for (const model of ['FINCH', 'LARK'] as const)
    it(`${model}: chunks run as a group (a burst on a stream thread) give each chunk what it gets one by one`, async () => {
      const format: PcmFormat = { rate: 16000, channels: 1, encoding: 'f32le' };
      const settings: StreamSettings = { rate: 16000, channels: 1, model, level: 100 };
      const chunks = Array.from({ length: 100 }, (_, i) =>
        encodePcm([speech.subarray(i * 320, (i + 1) * 320)], 320, format),
      );
      const alone = await LiveStream.create(settings);
      const one: Buffer[] = [];
      for (let i = 0; i < chunks.length; i++)
        one.push(await enhanceChunk(alone, chunks[i], format, i === chunks.length - 1));
      alone.destroy();
      const grouped = await LiveStream.create(settings);
      const groups: Buffer[] = [];
      // Groups of 1, 16, 7, 16, ... as a thread takes them while a burst comes in.
      for (let i = 0, n = 1; i < chunks.length; i += n, n = n === 16 ? 7 : 16) {
        const group = chunks.slice(i, i + n);
        groups.push(...(await enhanceChunks(grouped, group, format, i + group.length === chunks.length)));
      }
      grouped.destroy();
      assert.deepEqual(
        groups.map((bytes) => bytes.length),
        one.map((bytes) => bytes.length),
      );
      let worst = 0;
      groups.forEach((bytes, i) => {
        const [a, b] = [decodePcm(bytes, format)[0], decodePcm(one[i], format)[0]];
        for (let k = 0; k < a.length; k++) worst = Math.max(worst, Math.abs(a[k] - b[k]));
      });
      assert.ok(worst < 1e-6, `differs by ${worst}`);
    });
});
