// DNSMOS P.835 as the benchmark runs it: the model the repository carries loads, and it rates clean speech
// above the same speech in noise at 0 dB on background and overall quality, within the 1..5 scale; the
// benchmark's DNSMOS thread gives the same ratings.
import assert from 'node:assert/strict';
import { Dnsmos } from '../../bench/dnsmos';
import { DnsmosThread } from '../../bench/dnsmos-thread';
import { readSpeechSample, seededNoise } from '../enhance/speech-sample';
import { mix } from '../enhance/test-media';

describe('bench: DNSMOS P.835', function () {
  // Two 9 s windows through the network per test, one thread of WebAssembly (slow on a busy machine).
  this.timeout(120_000);
  let dnsmos: Dnsmos;
  before(async () => {
    dnsmos = await Dnsmos.load();
  });
  after(async () => {
    await dnsmos?.release();
  });

  it('rates clean speech higher on BAK and OVRL than the same speech with white noise at 0 dB', async () => {
    const { samples, sampleRate } = await readSpeechSample();
    const clean = samples.subarray(0, 5 * sampleRate);
    const noise = Float32Array.from({ length: clean.length }, seededNoise(9));
    const cleanScores = await dnsmos.score(clean, sampleRate);
    const noisyScores = await dnsmos.score(mix(clean, noise, 0), sampleRate);
    for (const scores of [cleanScores, noisyScores])
      for (const value of Object.values(scores)) assert.ok(value >= 1 && value <= 5, JSON.stringify(scores));
    const report = `clean ${JSON.stringify(cleanScores)}, noisy ${JSON.stringify(noisyScores)}`;
    assert.ok(cleanScores.bak > noisyScores.bak + 1, report);
    assert.ok(cleanScores.ovrl > noisyScores.ovrl + 0.5, report);
  });

  it('refuses an empty clip', async () => {
    await assert.rejects(dnsmos.score(new Float32Array(0), 16_000), /DNSMOS: the clip is empty/);
  });

  it('rates the same on a thread of its own, and passes its refusals back', async () => {
    const { samples, sampleRate } = await readSpeechSample();
    const clip = samples.subarray(0, 5 * sampleRate);
    const thread = new DnsmosThread();
    try {
      assert.deepEqual(await thread.score(clip, sampleRate), await dnsmos.score(clip, sampleRate));
      await assert.rejects(thread.score(new Float32Array(0), 16_000), /DNSMOS: the clip is empty/);
    } finally {
      await thread.close();
    }
  });
});
