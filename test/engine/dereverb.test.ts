// De-reverberation in the engine (the dereverb extension): real speech (the shipped sample) recorded in a
// simulated room with RT60 0.6 s goes through the engine's processor with FINCH, with `dereverb: 100` and
// without; the output with it is measurably closer (STOI, SI-SDR) to the speech's direct sound and early reflections, the
// report says so, and loudness only (no chain to run it in) refuses it before any work.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processMedia } from '../../src/engine/processors/enhance-processor';
import type { ProcessSettings } from '../../src/engine/processors/processor';
import type { MediaType } from '../../src/engine/storage/media-type';
import { siSdr } from '../../bench/quality-metrics';
import { stoi } from '../../bench/stoi';
import { benchRoom, convolve, earlyPart, roomImpulse } from '../../bench/room-impulse';
import { encodeWav } from '../fixtures/audio';
import { readSpeechSample } from '../enhance/speech-sample';
import { readWav } from '../enhance/test-media';

const WAV: MediaType = { kind: 'audio', ext: 'wav', contentType: 'audio/wav' };

describe('engine: de-reverberation', function () {
  this.timeout(180_000);
  let dir: string;
  let early: Float32Array;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dereverb-'));
    const { samples, sampleRate } = await readSpeechSample();
    const impulse = roomImpulse(benchRoom(0.6), sampleRate);
    const reverberant = convolve(samples, impulse.samples);
    early = convolve(samples, earlyPart(impulse, sampleRate));
    const peak = reverberant.reduce((most, s) => Math.max(most, Math.abs(s)), 0);
    const scaled = reverberant.map((s) => (0.5 * s) / peak);
    await writeFile(join(dir, 'input.wav'), encodeWav({ sampleRate, channels: 1, bits: 16 }, [scaled]));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const run = (output: string, extra: Partial<ProcessSettings> = {}) =>
    processMedia(
      {
        inputPath: join(dir, 'input.wav'),
        outputPath: join(dir, output),
        input: WAV,
        settings: { loudness_target: -16, true_peak: -1, enhancement_model: 'FINCH', ...extra },
      },
      { ffmpegPath: 'ffmpeg' },
    );

  it('with dereverb 100 comes out drier: STOI against the early sound 0.02 higher than without, SI-SDR higher too', async () => {
    const drier = await run('drier.wav', { dereverb: 100 });
    await run('plain.wav');
    const [withIt, without] = await Promise.all(['drier.wav', 'plain.wav'].map((f) => readWav(join(dir, f))));
    assert.equal(withIt.channels[0].length, without.channels[0].length, 'both outputs as long as the input');
    const [wet, plain] = [withIt.channels[0], without.channels[0]];
    // STOI (envelopes, as intelligibility goes) rather than SI-SDR alone: the chain's high-pass turns the
    // phase of the lowest tones, which SI-SDR against the unfiltered early sound counts as error in both.
    const clearer = stoi(early, wet, withIt.sampleRate) - stoi(early, plain, withIt.sampleRate);
    assert.ok(clearer >= 0.02, `STOI against the early sound: ${clearer.toFixed(3)} higher with dereverb`);
    const gained = siSdr(early, wet) - siSdr(early, plain);
    assert.ok(gained >= 0.5, `SI-SDR against the early sound: ${gained.toFixed(2)} dB more with dereverb`);
    const speech = (drier.params.speech_enhancement ?? {}) as { chain: string; dereverb?: unknown };
    assert.deepEqual(speech.dereverb, { method: 'WPE', strength_percent: 100 });
    assert.match(speech.chain, /high-pass, de-reverberation, noise reduction/);
  });

  it('refuses dereverb with LOUDNESS_ONLY before any work (the last guard), naming the member and the rule', async () => {
    await assert.rejects(
      run('refused.wav', { dereverb: 60, enhancement_model: 'LOUDNESS_ONLY' }),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'INVALID_SETTINGS');
        assert.match(
          err.message,
          /^dereverb: reduces room echo in the speech enhancement chain, and LOUDNESS_ONLY runs no speech model/,
        );
        return true;
      },
    );
  });
});
