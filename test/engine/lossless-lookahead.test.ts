// A lossless output (FLAC, or a WAV beside an MP3) holds the audio a WAV output holds, sample for sample:
// the limiter's longer look-ahead for a lossy encoder (first-round.ts) is for lossy coders only, where the
// coder's error spikes inside its frame; a FLAC limited with it starts its gain ramp twice as early before
// each peak, as if it were to be coded lossily.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processMedia } from '../../src/engine/processors/enhance-processor';
import type { ProcessSettings } from '../../src/engine/processors/processor';
import type { MediaType } from '../../src/engine/storage/media-type';
import { encodeWav } from '../fixtures/audio';
import { ffmpeg } from '../fixtures/ffmpeg';

const RATE = 48_000;
const TYPES: Record<string, MediaType> = {
  wav: { kind: 'audio', ext: 'wav', contentType: 'audio/wav' },
  flac: { kind: 'audio', ext: 'flac', contentType: 'audio/flac' },
  mp3: { kind: 'audio', ext: 'mp3', contentType: 'audio/mpeg' },
};
const SETTINGS: ProcessSettings = { loudness_target: -16, true_peak: -1, enhancement_model: 'LOUDNESS_ONLY' };
/**
 * What may differ between the two files (full scale 1): a float WAV and a 24-bit one rounded apart (a few
 * 2^-23), far under what a gain ramp 5 ms early leaves before a limited hit (a few hundredths).
 */
const SAME_AUDIO = 1e-4;

/** 8 s of a quiet chord with a sharp hit every half second: -16 LUFS needs the limiter on every hit. */
function hitsOverChord(): Float32Array {
  const out = new Float32Array(8 * RATE);
  for (let i = 0; i < out.length; i++) {
    const t = i / RATE;
    out[i] = 0.05 * (Math.sin(2 * Math.PI * 220 * t) + Math.sin(2 * Math.PI * 277.18 * t));
    const sinceHit = t % 0.5;
    if (sinceHit < 0.004) out[i] += 0.8 * Math.exp(-sinceHit / 0.001) * Math.sin(2 * Math.PI * 2000 * sinceHit);
  }
  return out;
}

/** A file's samples as 32-bit floats, decoded by ffmpeg. */
async function samplesOf(path: string): Promise<Float32Array> {
  await ffmpeg(['-i', path, '-f', 'f32le', '-c:a', 'pcm_f32le', `${path}.f32`]);
  const bytes = await readFile(`${path}.f32`);
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
}

function largestDifference(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length, 'both files hold the same number of samples');
  let largest = 0;
  for (let i = 0; i < a.length; i++) largest = Math.max(largest, Math.abs(a[i] - b[i]));
  return largest;
}

describe('engine: a lossless output is limited as a WAV output is', function () {
  this.timeout(180_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lossless-lookahead-'));
    await writeFile(join(dir, 'input.wav'), encodeWav({ sampleRate: RATE, channels: 1, bits: 24 }, [hitsOverChord()]));
    await ffmpeg(['-i', join(dir, 'input.wav'), '-c:a', 'flac', join(dir, 'input.flac')]);
    await ffmpeg(['-i', join(dir, 'input.wav'), '-c:a', 'libmp3lame', '-b:a', '192k', join(dir, 'input.mp3')]);
    // The reference: the WAV through the lossless path, its limiter at its own look-ahead.
    await processMedia(
      { inputPath: join(dir, 'input.wav'), outputPath: join(dir, 'alone.wav'), input: TYPES.wav, settings: SETTINGS },
      { ffmpegPath: 'ffmpeg' },
    );
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a FLAC output holds the WAV output of the same audio', async () => {
    const result = await processMedia(
      {
        inputPath: join(dir, 'input.flac'),
        outputPath: join(dir, 'output.flac'),
        input: TYPES.flac,
        settings: SETTINGS,
      },
      { ffmpegPath: 'ffmpeg' },
    );
    assert.equal(result.output.ext, 'flac');
    const difference = largestDifference(
      await samplesOf(join(dir, 'output.flac')),
      await samplesOf(join(dir, 'alone.wav')),
    );
    assert.ok(difference <= SAME_AUDIO, `the FLAC differs from the WAV by up to ${difference.toExponential(1)}`);
  });

  it("a WAV output beside an MP3 holds what the WAV alone holds, not the MP3's limiting", async () => {
    // The MP3 decoded is the WAV input of the reference here: the same samples reach both normalizations.
    await ffmpeg(['-i', join(dir, 'input.mp3'), '-c:a', 'pcm_s24le', join(dir, 'mp3-decoded.wav')]);
    await processMedia(
      {
        inputPath: join(dir, 'mp3-decoded.wav'),
        outputPath: join(dir, 'mp3-alone.wav'),
        input: TYPES.wav,
        settings: SETTINGS,
      },
      { ffmpegPath: 'ffmpeg' },
    );
    const result = await processMedia(
      {
        inputPath: join(dir, 'input.mp3'),
        outputPath: join(dir, 'output.mp3'),
        input: TYPES.mp3,
        settings: { ...SETTINGS, outputs: [{ name: 'master', transcode: 'WAV' }] },
        namedOutputPaths: { master: join(dir, 'master.wav') },
      },
      { ffmpegPath: 'ffmpeg' },
    );
    assert.deepEqual(
      result.outputs?.map((made) => made.output.ext),
      ['wav'],
    );
    const difference = largestDifference(
      await samplesOf(join(dir, 'master.wav')),
      await samplesOf(join(dir, 'mp3-alone.wav')),
    );
    assert.ok(
      difference <= SAME_AUDIO,
      `the WAV beside the MP3 differs from the WAV alone by up to ${difference.toExponential(1)}`,
    );
  });
});
