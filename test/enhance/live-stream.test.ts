// A live stream against the same denoiser run over the whole signal at once: chunked in 20 ms or in
// odd sizes, every chunk gives back as many samples as it brought, the joined output is the input's
// length plus the latency, and past the latency it is the whole-signal output sample for sample.
import assert from 'node:assert/strict';
import { ChannelDenoiser } from '../../src/enhance/channel-denoiser';
import { loadRnnoise } from '../../src/enhance/rnnoise';
import { LarkDenoiser } from '../../src/stream/lark-denoiser';
import { LiveStream, type StreamSettings } from '../../src/stream/live-stream';
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
});
