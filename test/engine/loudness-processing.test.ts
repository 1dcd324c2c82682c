// What the local engine does to a media, as a user checks it: the downloaded file measured by ffmpeg.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processMedia } from '../../src/engine/processors/enhance-processor';
import { encodeWav, sine, speechLike, writeWavFile } from '../fixtures/audio';
import { ffmpeg, ffmpegLoudness, streamCodecs, videoStreamMd5 } from '../fixtures/ffmpeg';
import { call, KEY, settled, startTestEngine, upload, type TestEngine } from './helpers';

describe('engine: loudness processing of audio and video', function () {
  this.timeout(120_000);
  let engine: TestEngine;
  let dir: string;
  let speechWav: string;

  before(async () => {
    // More uploads than the interface's 10 a minute: this file tests processing, not the rate limit.
    engine = await startTestEngine({ limits: { uploadMedia: null } });
    dir = await mkdtemp(join(tmpdir(), 'engine-loudness-'));
    speechWav = join(dir, 'speech.wav');
    // 8 s: many times the 3 s that ffmpeg's and the engine's meters gate over, so the loudness claims hold
    // as they would on an episode, and each round trip (FINCH, MP3, FLAC, video) stays short.
    await writeWavFile(speechWav, { sampleRate: 48_000, channels: 2, bits: 16 }, 8, speechLike(48_000, 2, 3, -34));
  });
  after(async () => {
    await engine.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  /** Uploads, waits, downloads to a file; returns the metadata and the file. */
  async function roundTrip(file: string, name: string, settings: object, path = '/v2/medias') {
    const part = path === '/v2/medias' ? 'media_enhancement' : 'video_enhancement';
    const res = await upload(engine, await readFile(file), name, { [part]: JSON.stringify(settings) }, path);
    assert.equal(res.status, 201, res.text);
    const done = await settled(engine, res.json.uid, 60_000);
    const download = await call(`${engine.url}/v2/medias/${res.json.uid}/file`, { headers: { 'x-api-key': KEY } });
    const out = join(dir, `out-${res.json.uid}`);
    await writeFile(out, download.bytes);
    return {
      done,
      out,
      contentType: download.headers['content-type'],
      disposition: download.headers['content-disposition'] as string,
    };
  }

  function assertOnTarget(measured: { integratedLufs: number; truePeakDbtp: number }, target: number, ceiling: number) {
    assert.ok(
      Math.abs(measured.integratedLufs - target) <= 0.5,
      `ffmpeg reads ${measured.integratedLufs} LUFS, target ${target}`,
    );
    assert.ok(measured.truePeakDbtp <= ceiling + 0.1, `ffmpeg reads ${measured.truePeakDbtp} dBTP, limit ${ceiling}`);
  }

  it('normalizes a WAV to the requested target under the peak limit, and says what it did', async () => {
    const { done, out, contentType } = await roundTrip(speechWav, 'talk.wav', {
      loudness_target: -18,
      true_peak: -2,
      enhancement_model: 'FINCH',
      enhancement_level: 60,
    });
    assert.equal(done.enhancement_status, 'COMPLETED');
    assert.equal(contentType, 'audio/wav');
    const measured = await ffmpegLoudness(out);
    assertOnTarget(measured, -18, -2);
    const input = await ffmpegLoudness(speechWav);
    const params = done.enhancement_params;
    assert.ok(
      Math.abs(params.input_loudness_lufs! - input.integratedLufs) <= 0.1,
      `input ${params.input_loudness_lufs} vs ${input.integratedLufs}`,
    );
    assert.ok(Math.abs(params.output_loudness_lufs! - measured.integratedLufs) <= 0.1);
    assert.ok(Math.abs(params.output_true_peak_dbtp! - measured.truePeakDbtp) <= 0.3);
    assert.equal(typeof params.output_loudness_range_lu, 'number');
    assert.equal(params.processing, 'speech enhancement, loudness');
    assert.equal(params.enhancement_model, 'FINCH', 'the requested model is recorded');
    assert.equal(params.enhancement_level, 60);
    // FINCH: high-pass and noise reduction at the requested strength, no leveler, no hum removal.
    const speech = params.speech_enhancement;
    assert.equal(speech.model, 'FINCH');
    assert.equal(speech.chain, 'high-pass, noise reduction');
    assert.deepEqual(speech.high_pass, { corner_hz: 80 });
    assert.equal(speech.noise_reduction?.wet_percent, 60);
    assert.equal(typeof speech.noise_reduction?.noise_floor_reduction_db, 'number');
    assert.equal(speech.leveler, null);
    assert.equal(speech.hum_removal, null);
  });

  it('decodes MP3 with ffmpeg and answers MP3 again', async () => {
    const mp3 = join(dir, 'speech.mp3');
    await ffmpeg(['-i', speechWav, '-c:a', 'libmp3lame', '-b:a', '128k', mp3]);
    const { done, out, contentType, disposition } = await roundTrip(mp3, 'episode.mp3', {
      loudness_target: -16,
      true_peak: -1,
    });
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    assert.equal(contentType, 'audio/mpeg');
    assert.equal(disposition, 'attachment; filename="episode_enhanced.mp3"');
    assert.deepEqual(await streamCodecs(out), ['mp3']);
    assertOnTarget(await ffmpegLoudness(out), -16, -1);
  });

  it('transcodes as asked: WAV in, MP3 out; FLAC in, WAV out', async () => {
    const toMp3 = await roundTrip(speechWav, 'talk.wav', { loudness_target: -16, true_peak: -1, transcode: 'MP3' });
    assert.equal(toMp3.contentType, 'audio/mpeg');
    assert.deepEqual(await streamCodecs(toMp3.out), ['mp3']);
    assertOnTarget(await ffmpegLoudness(toMp3.out), -16, -1);
    const flac = join(dir, 'speech.flac');
    await ffmpeg(['-i', speechWav, flac]);
    const toWav = await roundTrip(flac, 'talk.flac', { loudness_target: -20, true_peak: -1, transcode: 'WAV' });
    assert.equal(toWav.contentType, 'audio/wav');
    assert.deepEqual(await streamCodecs(toWav.out), ['pcm_s24le']);
    assertOnTarget(await ffmpegLoudness(toWav.out), -20, -1);
  });

  it('replaces a video soundtrack with the processed one and copies the picture untouched', async () => {
    const video = join(dir, 'clip.mp4');
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=25:duration=8',
      '-i',
      speechWav,
      '-c:v',
      'mpeg4',
      '-c:a',
      'aac',
      '-shortest',
      video,
    ]);
    const { done, out, contentType } = await roundTrip(
      video,
      'clip.mp4',
      { loudness_target: -16, true_peak: -1 },
      '/v1/videos',
    );
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    assert.equal(contentType, 'video/mp4');
    assert.deepEqual(await streamCodecs(out), ['mpeg4', 'aac']);
    assert.equal(await videoStreamMd5(out), await videoStreamMd5(video), 'the video stream is copied, not re-encoded');
    assertOnTarget(await ffmpegLoudness(out), -16, -1);
    assert.equal(
      done.enhancement_params.speech_enhancement.chain,
      'high-pass, hum removal, noise reduction, leveler',
      'the soundtrack goes through the same chain (LARK_V2 by default)',
    );
  });

  it('delivers the example video with FINCH under the true peak limit, though its 31 kb/s AAC overshoots', async () => {
    // A short, low-bitrate AAC soundtrack: the encoder adds more to the peaks than a first correction allows for.
    const video = join(__dirname, '..', '..', '..', 'examples', 'video-sample.mp4');
    const { done, out } = await roundTrip(
      video,
      'video-sample.mp4',
      { enhancement_model: 'FINCH', loudness_target: -16, true_peak: -1 },
      '/v1/videos',
    );
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    const measured = await ffmpegLoudness(out);
    assert.ok(measured.truePeakDbtp <= -1, `ffmpeg reads ${measured.truePeakDbtp} dBTP, limit -1`);
    assert.ok(
      Math.abs(measured.integratedLufs + 16) <= 0.5,
      `ffmpeg reads ${measured.integratedLufs} LUFS, target -16`,
    );
    // Its default coder's spikes outran every correction; the report says the fast coder was used, on target.
    assert.equal(done.enhancement_params.aac_coder, 'fast');
    assert.equal(done.enhancement_params.target_reached, true);
  });

  it('returns a video without a soundtrack unchanged, with a note', async () => {
    const silentFilm = join(dir, 'silent.mp4');
    await ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10:duration=1', '-c:v', 'mpeg4', silentFilm]);
    const { done, out } = await roundTrip(silentFilm, 'silent.mp4', {}, '/v1/videos');
    assert.equal(done.enhancement_status, 'COMPLETED');
    assert.match(done.enhancement_params.note!, /no audio stream/);
    assert.deepEqual(await readFile(out), await readFile(silentFilm));
  });

  it('returns a silent WAV byte for byte, and its metadata says nothing was done to it', async () => {
    const silence = join(dir, 'silence.wav');
    await writeWavFile(silence, { sampleRate: 44_100, channels: 1, bits: 16 }, 3, (frames) => [
      new Float32Array(frames),
    ]);
    const { done, out } = await roundTrip(silence, 'silence.wav', { loudness_target: -16, true_peak: -1 });
    assert.equal(done.enhancement_status, 'COMPLETED');
    assert.equal(done.enhancement_params.processing, 'none');
    assert.match(done.enhancement_params.note!, /silent .* returned unchanged, never amplified/);
    assert.deepEqual(await readFile(out), await readFile(silence));
  });

  it('normalizes a 0.3 s clip of speech, measured over its whole length (not "silent"), and says so', async () => {
    const clip = join(dir, 'clip.wav');
    await writeWavFile(clip, { sampleRate: 48_000, channels: 1, bits: 16 }, 0.3, speechLike(48_000, 1, 3, -24));
    const { done, out } = await roundTrip(clip, 'clip.wav', { loudness_target: -19, true_peak: -1 });
    assert.equal(done.enhancement_status, 'COMPLETED');
    const params = done.enhancement_params;
    assert.equal(params.processing, 'speech enhancement, loudness');
    assert.equal(params.note, undefined);
    assert.equal(params.target_reached, true);
    assert.ok(Math.abs(params.output_loudness_lufs! - -19) <= 0.1, `output ${params.output_loudness_lufs}`);
    assert.match(
      String(params.loudness_measured_over),
      /^the whole file \(0\.30 s\): it is shorter than one 400 ms gating block$/,
    );
    assert.notDeepEqual(await readFile(out), await readFile(clip));
  });

  it('claims no noise reduction for a near-silent clip returned as it came', async () => {
    const hum = join(dir, 'hum.wav');
    await writeFile(hum, encodeWav({ sampleRate: 48_000, channels: 1, bits: 16 }, [sine(48_000, 50, -80, 0.3)]));
    const { done, out } = await roundTrip(hum, 'hum.wav', {
      loudness_target: -19,
      true_peak: -1,
      enhancement_model: 'FINCH',
    });
    const params = done.enhancement_params;
    assert.equal(params.processing, 'none');
    assert.deepEqual(await readFile(out), await readFile(hum));
    assert.equal(params.speech_enhancement.chain, '');
    assert.equal(params.speech_enhancement.noise_reduction, null);
    assert.match(
      String((params.speech_enhancement as { note?: string }).note),
      /not applied: the file is returned as it came/,
    );
  });

  it('measures a float WAV far above full scale and brings it down to the target (not "silent")', async () => {
    // A float32 sine at amplitude 20: +26 dBFS, about +23 LUFS.
    const loud = join(dir, 'loud.wav');
    await writeFile(
      loud,
      encodeWav({ sampleRate: 48_000, channels: 1, bits: 32, float: true }, [
        sine(48_000, 1000, 20 * Math.log10(20), 5),
      ]),
    );
    const { done, out } = await roundTrip(loud, 'loud.wav', {
      loudness_target: -16,
      true_peak: -1,
      enhancement_model: 'FINCH',
      enhancement_level: 1,
    });
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    const params = done.enhancement_params;
    assert.equal(params.processing, 'speech enhancement, loudness');
    // ffmpeg's own meter stops at +10 LUFS: it reads the input 40 dB quieter, and 40 dB is added back.
    const quieter = join(dir, 'loud-minus-40.wav');
    await ffmpeg(['-i', loud, '-af', 'volume=-40dB', '-c:a', 'pcm_f32le', quieter]);
    const input = await ffmpegLoudness(quieter);
    assert.ok(
      Math.abs(params.input_loudness_lufs! - (input.integratedLufs + 40)) <= 0.1,
      `input ${params.input_loudness_lufs} LUFS, ffmpeg ${input.integratedLufs} + 40`,
    );
    assert.ok(params.input_true_peak_dbtp! > 25.9, `input true peak ${params.input_true_peak_dbtp}`);
    const measured = await ffmpegLoudness(out);
    assert.ok(Math.abs(measured.integratedLufs - -16) <= 0.1, `ffmpeg reads ${measured.integratedLufs} LUFS`);
    assert.ok(measured.truePeakDbtp <= -1 + 0.1, `ffmpeg reads ${measured.truePeakDbtp} dBTP`);
    assert.equal(params.target_reached, true);
  });

  it('fails a float WAV holding NaN or infinity, naming the frame', async () => {
    for (const [name, bad] of [
      ['nan', NaN],
      ['infinite', Infinity],
    ] as const) {
      const samples = sine(48_000, 440, -20, 2);
      samples[12_345] = bad;
      const res = await upload(
        engine,
        encodeWav({ sampleRate: 48_000, channels: 1, bits: 32, float: true }, [samples]),
        `${name}.wav`,
      );
      const done = await settled(engine, res.json.uid, 30_000);
      assert.equal(done.enhancement_status, 'FAILED', name);
      assert.equal(done.error!.code, 'INVALID_MEDIA');
      assert.match(
        done.error!.message,
        new RegExp(`not a finite number \\(${bad}\\) at frame 12345, channel 1: float samples must be finite`),
      );
    }
  });

  it('bounds the limiting by the engine option, and says when the target is out of reach', async () => {
    const bounded = await startTestEngine({ maxLimitingDb: 2 });
    try {
      // Speech at -34 dBFS RMS brought to -10 LUFS under -3 dBTP needs far more than 2 dB of limiting.
      const res = await upload(bounded, await readFile(speechWav), 'talk.wav', {
        media_enhancement: JSON.stringify({ loudness_target: -10, true_peak: -3, enhancement_model: 'FINCH' }),
      });
      const done = await settled(bounded, res.json.uid, 60_000);
      assert.equal(done.enhancement_status, 'COMPLETED');
      const params = done.enhancement_params;
      assert.equal(params.target_reached, false);
      assert.ok(
        params.limiter_reduction_db! <= 2.05 && params.limiter_reduction_db! >= 1.95,
        `limiting ${params.limiter_reduction_db} dB`,
      );
      assert.match(
        params.note!,
        new RegExp(
          `^-10 LUFS is out of reach under the -3 dBTP limit with at most 2 dB of limiting: the output is ${params.output_loudness_lufs!.toFixed(1)} LUFS$`,
        ),
      );
      const download = await call(`${bounded.url}/v2/medias/${res.json.uid}/file`, { headers: { 'x-api-key': KEY } });
      const out = join(dir, 'bounded.wav');
      await writeFile(out, download.bytes);
      const measured = await ffmpegLoudness(out);
      assert.ok(measured.truePeakDbtp <= -3 + 0.1, `ffmpeg reads ${measured.truePeakDbtp} dBTP`);
      assert.ok(Math.abs(measured.integratedLufs - params.output_loudness_lufs!) <= 0.05);
    } finally {
      await bounded.dispose();
    }
    await assert.rejects(
      startTestEngine({ maxLimitingDb: -1 }),
      /^TypeError: maxLimitingDb: must be a number of at least 0 \(got -1\)$/,
    );
    const cli = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [join(__dirname, '..', '..', 'src', 'engine', 'cli.js'), '--max-limiting-db=-1'],
        (_err, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    assert.equal(cli.code, 1);
    assert.equal(cli.stderr, 'media-enhance-engine: --max-limiting-db: must be a number of at least 0 (got "-1")\n');
  });

  it('fails a damaged WAV with the reason, and keeps serving', async () => {
    const wav = await readFile(speechWav);
    const damaged = join(dir, 'damaged.wav');
    await writeFile(damaged, wav.subarray(0, wav.length / 2));
    const res = await upload(engine, await readFile(damaged), 'damaged.wav');
    const done = await settled(engine, res.json.uid, 30_000);
    assert.equal(done.enhancement_status, 'FAILED');
    assert.equal(done.error!.code, 'INVALID_MEDIA');
    assert.match(done.error!.message, /truncated WAV: the data chunk declares \d+ bytes but the file holds \d+/);
  });

  it('starts a job over without the work files an engine stopped mid-job left behind', async () => {
    const media = join(dir, 'stopped-media');
    await mkdir(media);
    await copyFile(speechWav, join(media, 'input'));
    for (const leftover of ['output.4242.part', 'output.decoded.wav', 'output.encoded'])
      await writeFile(join(media, leftover), 'half-written');
    const job = {
      inputPath: join(media, 'input'),
      outputPath: join(media, 'output'),
      input: { kind: 'audio', ext: 'wav', contentType: 'audio/wav' },
      settings: { loudness_target: -16, true_peak: -1, enhancement_model: 'LARK_V2' },
    } as const;
    const result = await processMedia(job, { ffmpegPath: 'ffmpeg' });
    assert.equal(result.params.processing, 'speech enhancement, loudness');
    assert.deepEqual((await readdir(media)).sort(), ['input', 'output']);
  });

  it('a failure inside speech enhancement is ENHANCEMENT_FAILED with its cause, and leaves no work file', async () => {
    const media = join(dir, 'failing-media');
    await mkdir(media);
    await copyFile(speechWav, join(media, 'input'));
    const job = {
      inputPath: join(media, 'input'),
      outputPath: join(media, 'output'),
      input: { kind: 'audio', ext: 'wav', contentType: 'audio/wav' },
      // FINCH runs a thread per channel (DeepFilterNet3 keeps a stereo file's two on one thread).
      settings: { loudness_target: -16, true_peak: -1, enhancement_model: 'FINCH' },
    } as const;
    // The thread that took the second channel dies.
    const help = {
      threads: 2,
      runElsewhere: () => Promise.reject(new Error('the thread running part of this job stopped unexpectedly')),
    };
    await assert.rejects(
      processMedia(job, { ffmpegPath: 'ffmpeg' }, help),
      (err: { code?: string; message: string }) => {
        assert.equal(err.code, 'ENHANCEMENT_FAILED');
        assert.equal(
          err.message,
          'speech enhancement failed: the thread running part of this job stopped unexpectedly',
        );
        return true;
      },
    );
    assert.deepEqual(await readdir(media), ['input']);
  });

  it('without ffmpeg: MP3 ends FAILED saying ffmpeg is needed, WAV still works', async () => {
    const without = await startTestEngine({ ffmpegPath: join(dir, 'no-such-ffmpeg') });
    try {
      const mp3 = join(dir, 'speech.mp3');
      const res = await upload(without, await readFile(mp3), 'episode.mp3');
      const failed = await settled(without, res.json.uid, 30_000);
      assert.equal(failed.enhancement_status, 'FAILED');
      assert.equal(failed.error!.code, 'FFMPEG_REQUIRED');
      assert.match(
        failed.error!.message,
        /decoding MP3 needs ffmpeg, which the engine did not find .*send WAV, which never needs it/,
      );
      // FINCH, the fast chain: what is under test is that WAV needs no ffmpeg, not the denoiser.
      const wav = await upload(without, await readFile(speechWav), 'talk.wav', {
        media_enhancement: JSON.stringify({ loudness_target: -16, true_peak: -1, enhancement_model: 'FINCH' }),
      });
      assert.equal((await settled(without, wav.json.uid, 30_000)).enhancement_status, 'COMPLETED');
    } finally {
      await without.dispose();
    }
  });
});
