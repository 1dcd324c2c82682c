// Loudness only on lossy files lands where the lossless path lands: music mastered loud (a podcast intro)
// as WAV, MP3, M4A and Opus, and speech as MP3, each made in the test with ffmpeg and taken to -16 LUFS
// under -1 dBTP, the output measured by ffmpeg. The encoder's overshoot is found once (two encodes at
// most), so a lossy output is neither squashed round after round nor refused a target the WAV reaches.
// A file of a minute or more learns the encoder's effect from an excerpt, and is encoded whole once.
import assert from 'node:assert/strict';
import childProcess from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_LIMITING_DB } from '../../src/audio/normalize';
import { processMedia } from '../../src/engine/processors/enhance-processor';
import type { MediaType } from '../../src/engine/storage/media-type';
import { encodeWav } from '../fixtures/audio';
import { ffmpeg, ffmpegLoudness } from '../fixtures/ffmpeg';
import { loudnessReportOf } from '../fixtures/loudness-report';
import { masteredMusic } from '../fixtures/mastered-music';
import { SPEECH_SAMPLE } from '../enhance/speech-sample';

const TARGET = -16;
const CEILING = -1;
/** ffmpeg's meter and ours may differ this much on a true peak. */
const METER_TOLERANCE_DB = 0.1;
/** What a podcaster accepts as on target through a lossy encoder. */
const ON_TARGET_LU = 0.5;

const TYPES: Record<string, MediaType> = {
  wav: { kind: 'audio', ext: 'wav', contentType: 'audio/wav' },
  mp3: { kind: 'audio', ext: 'mp3', contentType: 'audio/mpeg' },
  m4a: { kind: 'audio', ext: 'm4a', contentType: 'audio/mp4' },
  ogg: { kind: 'audio', ext: 'ogg', contentType: 'audio/ogg' },
};
const ENCODERS: Record<string, string[]> = {
  wav: ['-c:a', 'pcm_f32le'],
  mp3: ['-c:a', 'libmp3lame', '-b:a', '192k'],
  m4a: ['-c:a', 'aac', '-b:a', '192k'],
  ogg: ['-c:a', 'libopus', '-b:a', '128k'],
};

/** What ffmpeg's ebur128 reads of the output: the target within ON_TARGET_LU, the true peak under the ceiling. */
function assertOnTargetUnderCeiling(measured: { integratedLufs: number; truePeakDbtp: number }, said: string): void {
  assert.ok(
    measured.truePeakDbtp <= CEILING + METER_TOLERANCE_DB,
    `ffmpeg reads ${measured.truePeakDbtp.toFixed(2)} dBTP over the ${CEILING} dBTP ceiling; ${said}`,
  );
  assert.ok(
    Math.abs(measured.integratedLufs - TARGET) <= ON_TARGET_LU,
    `ffmpeg reads ${measured.integratedLufs} LUFS; ${said}`,
  );
}

describe('engine: loudness only on lossy files reaches the target the lossless path reaches', function () {
  this.timeout(180_000);
  let dir: string;

  async function normalise(media: string, input: MediaType, maxLimitingDb?: number) {
    const result = await processMedia(
      {
        inputPath: join(media, `input.${input.ext}`),
        outputPath: join(media, `output.${input.ext}`),
        input,
        settings: { loudness_target: TARGET, true_peak: CEILING, enhancement_model: 'LOUDNESS_ONLY' },
      },
      { ffmpegPath: 'ffmpeg', maxLimitingDb },
    );
    const measured = await ffmpegLoudness(join(media, `output.${input.ext}`));
    return { params: loudnessReportOf(result.params), measured };
  }

  /**
   * `source` encoded by ffmpeg as `ext` and that file decoded to WAV. The WAV goes through the lossless
   * path (the reference: the limiting the target needs); the encoded file through the lossy path with the
   * bound on limiting set just above what the WAV needed, so that nothing but the encoder is left to
   * make the target out of reach.
   */
  async function normaliseBoth(name: string, source: string, ext: string) {
    const media = join(dir, name);
    await mkdir(media);
    await ffmpeg(['-i', source, ...ENCODERS[ext], '-f', ext === 'm4a' ? 'ipod' : ext, join(media, `input.${ext}`)]);
    await ffmpeg(['-i', join(media, `input.${ext}`), '-c:a', 'pcm_f32le', join(media, 'input.wav')]);
    const lossless = await normalise(media, TYPES.wav);
    const bound = Math.min(DEFAULT_MAX_LIMITING_DB, lossless.params.limiter_reduction_db + 0.3);
    return { lossless, bound, lossy: await normalise(media, TYPES[ext], bound) };
  }

  /** The whole-file encodes (ffmpeg runs with the user's file as a second input, for its tags) while `work` runs. */
  async function wholeEncodes<T>(work: () => Promise<T>): Promise<{ result: T; encodes: number }> {
    const spawn = childProcess.spawn;
    let encodes = 0;
    childProcess.spawn = ((command: string, args: string[], options: object) => {
      if (args.filter((arg) => arg === '-i').length === 2 && args.some((arg) => arg.endsWith('normalized.wav')))
        encodes++;
      return spawn(command, args, options);
    }) as typeof spawn;
    try {
      return { result: await work(), encodes };
    } finally {
      childProcess.spawn = spawn;
    }
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lossy-loudness-'));
    // About -7.4 LUFS with the true peak at +9 dBTP: -16 under -1 needs about 6 dB of limiting, within the 8 dB bound.
    await writeFile(
      join(dir, 'intro.wav'),
      encodeWav({ sampleRate: 44_100, channels: 2, bits: 32, float: true }, masteredMusic(44_100, 10, -10)),
    );
    await copyFile(SPEECH_SAMPLE, join(dir, 'speech.wav'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const [name, ext, source] of [
    ['music as MP3 192k', 'mp3', 'intro'],
    ['music as M4A (AAC 192k)', 'm4a', 'intro'],
    ['music as Opus 128k', 'ogg', 'intro'],
    ['speech as MP3 192k', 'mp3', 'speech'],
  ] as const) {
    it(`${name}: on target and under the ceiling, as ffmpeg reads it`, async () => {
      const { lossy, lossless, bound } = await normaliseBoth(`${source}-${ext}`, join(dir, `${source}.wav`), ext);
      const { params, measured } = lossy;
      const said = JSON.stringify(params);
      assert.equal(
        lossless.params.target_reached,
        true,
        `the WAV reaches the target: ${JSON.stringify(lossless.params)}`,
      );
      if (source === 'intro')
        assert.ok(
          lossless.params.limiter_reduction_db > 3,
          `the music needs limiting: ${JSON.stringify(lossless.params)}`,
        );
      assertOnTargetUnderCeiling(measured, said);
      assert.equal(
        params.target_reached,
        true,
        `reached on the lossless path within ${bound.toFixed(2)} dB of limiting, so reached here; ${said}`,
      );
      assert.equal(params.note, undefined, said);
      // Squashed no more than the WAV was, beyond what the encoder needed.
      assert.ok(
        params.limiter_reduction_db <= lossless.params.limiter_reduction_db + (params.encoder_headroom_db ?? 0) + 2,
        `about as much limiting as the WAV (${lossless.params.limiter_reduction_db} dB) and the encoder's room; ${said}`,
      );
    });
  }

  for (const [name, ext, source, loops] of [
    ['70 s of music as MP3 192k', 'mp3', 'intro', 7],
    ['70 s of music as M4A (AAC 192k)', 'm4a', 'intro', 7],
    ['74 s of speech as MP3 192k', 'mp3', 'speech', 7],
  ] as const) {
    it(`${name}: the encoder learnt from an excerpt, on target and under the ceiling, as ffmpeg reads it`, async () => {
      const media = join(dir, `long-${source}-${ext}`);
      await mkdir(media);
      const input = join(media, `input.${ext}`);
      await ffmpeg([
        '-stream_loop',
        String(loops - 1),
        '-i',
        join(dir, `${source}.wav`),
        ...ENCODERS[ext],
        '-f',
        ext === 'm4a' ? 'ipod' : ext,
        input,
      ]);
      const { result, encodes } = await wholeEncodes(() => normalise(media, TYPES[ext]));
      const { params, measured } = result;
      const said = JSON.stringify(params);
      assertOnTargetUnderCeiling(measured, said);
      assert.equal(params.target_reached, true, said);
      assert.equal(encodes, 1, `the whole file was encoded ${encodes} times; ${said}`);
    });
  }
});
