// LARK's warm-up at a live stream's open (src/stream/lark-denoiser.ts): the first stream of a thread's
// session runs a throwaway denoiser first, once; a second stream opens without it; and the warm-up leaves
// no trace in what a stream gives (the same output opened cold or warm).
import assert from 'node:assert/strict';
import { dfnModelState, releaseDfnModel } from '../../src/enhance/dfn-model';
import { WARM_UP_SECONDS } from '../../src/stream/lark-denoiser';
import { LiveStream, type StreamSettings } from '../../src/stream/live-stream';
import { readSpeechSample, seededNoise } from '../enhance/speech-sample';

/** The stream's joined output over `input` in 20 ms chunks (the stream destroyed after). */
async function output(stream: LiveStream, input: Float32Array, rate: number): Promise<Float32Array> {
  const parts: Float32Array[] = [];
  const chunk = rate / 50;
  for (let at = 0; at < input.length; at += chunk) {
    const part = input.subarray(at, at + chunk);
    const last = at + chunk >= input.length;
    parts.push((last ? await stream.end([part], part.length) : await stream.push([part], part.length))[0]);
  }
  stream.destroy();
  const joined = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return joined;
}

describe('LARK live stream: the warm-up at the open', function () {
  this.timeout(120_000);

  for (const runtime of ['wasm', 'auto'] as const)
    it(`${runtime}: the first stream of a session warms it once before it opens, and gives what a stream opened warm does`, async () => {
      const rate = 16000;
      const settings: StreamSettings = { rate, channels: 1, model: 'LARK', level: 100, runtime };
      const { samples } = await readSpeechSample();
      const noise = seededNoise(7);
      const input = samples.subarray(0, rate * 2).map((s) => s + 0.02 * noise());
      /** A stream opened, with the network runs the thread made meanwhile. */
      const opened = async () => {
        const before = dfnModelState().runs;
        const stream = await LiveStream.create(settings);
        return { stream, runs: dfnModelState().runs - before };
      };
      // The thread's session made afresh, as on a new stream thread (a test before may have warmed one).
      await releaseDfnModel();
      const cold = await opened();
      const warm = await opened();
      assert.ok(
        cold.runs >= 0.9 * ((WARM_UP_SECONDS * 1000) / 20),
        `about a run per 20 ms chunk of the warm-up at the first open (${cold.runs} runs)`,
      );
      assert.equal(warm.runs, 0, 'a second stream on the session opens without warming it again');
      const fromCold = await output(cold.stream, input, rate);
      const fromWarm = await output(warm.stream, input, rate);
      assert.deepEqual(fromCold, fromWarm, 'the same output, opened cold or warm');
    });
});
