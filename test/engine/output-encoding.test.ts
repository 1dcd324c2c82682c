// The output keeps the input's encoding (codec, bitrate mode and bitrate, sample rate, channels), or
// takes the encoding the user chose (the output-encoding extension), read back with ffprobe.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { speechLike, writeWavFile } from '../fixtures/audio';
import { ffmpeg, ffmpegLoudness, probeAudio, type ProbedStream } from '../fixtures/ffmpeg';
import { call, KEY, settled, startTestEngine, upload, type TestEngine } from './helpers';

/** How close a kept bitrate must be to the input's. */
const BITRATE_TOLERANCE = 0.05;

describe('engine: the output keeps the input encoding, or takes the one chosen', function () {
  this.timeout(120_000);
  let engine: TestEngine;
  let dir: string;
  let speechWav: string;

  before(async () => {
    engine = await startTestEngine({ limits: { uploadMedia: null } });
    dir = await mkdtemp(join(tmpdir(), 'engine-encoding-'));
    speechWav = join(dir, 'speech.wav');
    await writeWavFile(speechWav, { sampleRate: 44_100, channels: 2, bits: 16 }, 4, speechLike(44_100, 2, 7, -30));
  });
  after(async () => {
    await engine.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  /** `speechWav` encoded by ffmpeg with `args` into `name`. */
  async function made(name: string, args: string[]): Promise<string> {
    const path = join(dir, name);
    await ffmpeg(['-i', speechWav, ...args, path]);
    return path;
  }

  /** Uploads with FINCH (the cheapest model) and the settings, waits, and downloads the enhanced file. */
  async function enhanced(file: string, name: string, settings: object = {}) {
    const res = await upload(engine, await readFile(file), name, {
      media_enhancement: JSON.stringify({ enhancement_model: 'FINCH', loudness_target: -16, ...settings }),
    });
    assert.equal(res.status, 201, res.text);
    const done = await settled(engine, res.json.uid, 60_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    const download = await call(`${engine.url}/v2/medias/${res.json.uid}/file`, { headers: { 'x-api-key': KEY } });
    const out = join(dir, `out-${res.json.uid}-${name}`);
    await writeFile(out, download.bytes);
    return { out, params: done.enhancement_params as Record<string, unknown> };
  }

  function assertBitrate(out: ProbedStream, input: ProbedStream) {
    const ratio = Number(out.bit_rate) / Number(input.bit_rate);
    assert.ok(
      Math.abs(ratio - 1) <= BITRATE_TOLERANCE,
      `output ${out.bit_rate} b/s against the input's ${input.bit_rate} (${((ratio - 1) * 100).toFixed(1)} %)`,
    );
  }

  function assertShape(out: ProbedStream, input: ProbedStream) {
    assert.equal(out.codec_name, input.codec_name);
    assert.equal(out.sample_rate, input.sample_rate);
    assert.equal(out.channels, input.channels);
  }

  /** An MP3's mode as its first frame declares it: a `Xing` header for VBR, `Info` (or none) for CBR. */
  async function mp3Mode(path: string): Promise<'VBR' | 'CBR'> {
    const bytes = (await readFile(path)).subarray(0, 8192);
    return bytes.indexOf('Xing') >= 0 ? 'VBR' : 'CBR';
  }

  it('an MP3 of 128 kbps CBR comes back at 128 kbps CBR, same rate and channels', async () => {
    const mp3 = await made('cbr.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']);
    const { out, params } = await enhanced(mp3, 'cbr.mp3');
    const [input, output] = [await probeAudio(mp3), await probeAudio(out)];
    assertShape(output, input);
    assert.equal(await mp3Mode(out), 'CBR');
    assertBitrate(output, input);
    assert.deepEqual(params.output_encoding, {
      codec: 'mp3',
      bitrate_mode: 'CBR',
      bitrate_kbps: 128,
      sample_rate_hz: 44100,
      channels: 2,
    });
    const loudness = await ffmpegLoudness(out);
    assert.ok(Math.abs(loudness.integratedLufs + 16) <= 0.5, `${loudness.integratedLufs} LUFS`);
  });

  it('a VBR MP3 comes back VBR at its average bitrate', async () => {
    const mp3 = await made('vbr.mp3', ['-c:a', 'libmp3lame', '-q:a', '4']);
    assert.equal(await mp3Mode(mp3), 'VBR');
    const { out, params } = await enhanced(mp3, 'vbr.mp3');
    const [input, output] = [await probeAudio(mp3), await probeAudio(out)];
    assertShape(output, input);
    assert.equal(await mp3Mode(out), 'VBR');
    assertBitrate(output, input);
    assert.equal((params.output_encoding as { bitrate_mode: string }).bitrate_mode, 'VBR');
  });

  it('a VBR MP3 that LAME made keeps its -V level', async () => {
    const mp3 = await made('lame-v6.mp3', ['-c:a', 'libmp3lame', '-q:a', '6']);
    // ffmpeg writes the Xing header without LAME's quality: written here as LAME 3.100 writes it for -V 6 (q 3).
    const bytes = await readFile(mp3);
    const xing = bytes.indexOf('Xing');
    const quality = xing + 8 + 4 + 4 + 100;
    bytes.writeUInt32BE(100 - 10 * 6 - 3, quality);
    bytes.write('LAME3.100', quality + 4, 'latin1');
    await writeFile(mp3, bytes);
    const { out, params } = await enhanced(mp3, 'lame.mp3');
    assert.equal(await mp3Mode(out), 'VBR');
    assert.deepEqual(params.output_encoding, {
      codec: 'mp3',
      bitrate_mode: 'VBR',
      vbr_quality: 6,
      sample_rate_hz: 44100,
      channels: 2,
    });
  });

  it('an M4A of 96 kbps comes back at 96 kbps AAC', async () => {
    const m4a = await made('talk.m4a', ['-c:a', 'aac', '-b:a', '96k']);
    const { out } = await enhanced(m4a, 'talk.m4a');
    const [input, output] = [await probeAudio(m4a), await probeAudio(out)];
    assertShape(output, input);
    assertBitrate(output, input);
  });

  it('an Ogg Vorbis file comes back at the same VBR quality (its nominal bitrate)', async () => {
    const ogg = await made('talk.ogg', ['-c:a', 'libvorbis', '-q:a', '3']);
    const { out, params } = await enhanced(ogg, 'talk.ogg');
    const [input, output] = [await probeAudio(ogg), await probeAudio(out)];
    assertShape(output, input);
    assertBitrate(output, input);
    const quality = (params.output_encoding as { vbr_quality: number }).vbr_quality;
    assert.ok(Math.abs(quality - 3) <= 0.5, `Vorbis quality ${quality}, the input's was 3`);
  });

  it('a FLAC file comes back FLAC at its rate, channels and bit depth', async () => {
    const flac = join(dir, 'mono48.flac');
    await ffmpeg(['-i', speechWav, '-ar', '48000', '-ac', '1', '-c:a', 'flac', '-sample_fmt', 's16', flac]);
    const { out } = await enhanced(flac, 'mono48.flac');
    const [input, output] = [await probeAudio(flac), await probeAudio(out)];
    assertShape(output, input);
    assert.equal(output.sample_fmt, 's16');
    assert.equal(output.bits_per_raw_sample, input.bits_per_raw_sample);
  });

  it("a video's soundtrack keeps its codec and bitrate", async () => {
    const mp4 = join(dir, 'clip.mp4');
    await ffmpeg([
      ...['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10:duration=4', '-i', speechWav],
      ...['-c:v', 'mpeg4', '-c:a', 'aac', '-b:a', '128k', '-ar', '48000', '-shortest', mp4],
    ]);
    const { out } = await enhanced(mp4, 'clip.mp4');
    const [input, output] = [await probeAudio(mp4), await probeAudio(out)];
    assertShape(output, input);
    assertBitrate(output, input);
  });

  it('takes the chosen encoding: WAV to MP3 at 64 kbps CBR, 22.05 kHz, mono', async () => {
    const { out, params } = await enhanced(speechWav, 'talk.wav', {
      transcode: 'MP3',
      bitrate_kbps: 64,
      bitrate_mode: 'CBR',
      sample_rate_hz: 22050,
      downmix_mono: true,
    });
    const output = await probeAudio(out);
    assert.equal(output.codec_name, 'mp3');
    assert.equal(output.bit_rate, '64000');
    assert.equal(output.sample_rate, '22050');
    assert.equal(output.channels, 1);
    assert.equal(await mp3Mode(out), 'CBR');
    assert.equal(params.bitrate_kbps, 64, 'the choice is echoed in enhancement_params');
    assert.equal(params.downmix_mono, true);
    const loudness = await ffmpegLoudness(out);
    assert.ok(Math.abs(loudness.integratedLufs + 16) <= 0.5, `mono downmix measured ${loudness.integratedLufs} LUFS`);
  });

  it('takes VBR at a chosen average bitrate over a CBR input', async () => {
    const mp3 = await made('cbr192.mp3', ['-c:a', 'libmp3lame', '-b:a', '192k']);
    const { out, params } = await enhanced(mp3, 'cbr192.mp3', { bitrate_mode: 'VBR', bitrate_kbps: 96 });
    assert.equal(await mp3Mode(out), 'VBR');
    assert.deepEqual(params.output_encoding, {
      codec: 'mp3',
      bitrate_mode: 'VBR',
      bitrate_kbps: 96,
      sample_rate_hz: 44100,
      channels: 2,
    });
    const kbps = Number((await probeAudio(out)).bit_rate) / 1000;
    assert.ok(kbps < 150, `an average of about 96 kbps, not the input's 192: ${kbps}`);
  });

  describe('422 for an encoding choice out of bounds or for a lossless output', () => {
    const cases: [string, object, string, string][] = [
      ['a bitrate over 320', { transcode: 'MP3', bitrate_kbps: 400 }, 'bitrate_kbps', 'value_error.number.not_le'],
      ['a bitrate under 64', { transcode: 'MP3', bitrate_kbps: 32 }, 'bitrate_kbps', 'value_error.number.not_ge'],
      ['a fractional bitrate', { transcode: 'MP3', bitrate_kbps: 96.5 }, 'bitrate_kbps', 'type_error.integer'],
      ['an unknown mode', { transcode: 'MP3', bitrate_mode: 'ABR' }, 'bitrate_mode', 'type_error.enum'],
      ['an unknown rate', { transcode: 'MP3', sample_rate_hz: 11025 }, 'sample_rate_hz', 'type_error.enum'],
      ['a downmix that is not a boolean', { transcode: 'MP3', downmix_mono: 'yes' }, 'downmix_mono', 'type_error.bool'],
      [
        'a bitrate with transcode WAV',
        { transcode: 'WAV', bitrate_kbps: 128 },
        'bitrate_kbps',
        'value_error.lossless_output',
      ],
      ['a mono downmix of a WAV kept WAV', { downmix_mono: true }, 'downmix_mono', 'value_error.lossless_output'],
    ];
    for (const [what, settings, member, type] of cases) {
      it(`refuses ${what}, naming ${member}`, async () => {
        const res = await upload(engine, await readFile(speechWav), 'talk.wav', {
          media_enhancement: JSON.stringify(settings),
        });
        assert.equal(res.status, 422, res.text);
        const issue = (res.json.detail as { loc: string[]; type: string }[])[0];
        assert.deepEqual(issue.loc, ['body', 'media_enhancement', member]);
        assert.equal(issue.type, type);
      });
    }

    it('refuses the choices in video_enhancement (a member of v2 uploads only)', async () => {
      const res = await upload(
        engine,
        await readFile(speechWav),
        'talk.wav',
        { video_enhancement: JSON.stringify({ bitrate_kbps: 128 }) },
        '/v1/videos',
      );
      assert.equal(res.status, 422, res.text);
      assert.equal((res.json.detail as { type: string }[])[0].type, 'value_error.extra');
    });

    it('fails an M4A holding ALAC before any work when a bitrate is asked', async () => {
      const alac = await made('lossless.m4a', ['-c:a', 'alac']);
      const res = await upload(engine, await readFile(alac), 'lossless.m4a', {
        media_enhancement: JSON.stringify({ enhancement_model: 'FINCH', bitrate_kbps: 128 }),
      });
      assert.equal(res.status, 201, res.text);
      const done = await settled(engine, res.json.uid, 60_000);
      assert.equal(done.enhancement_status, 'FAILED');
      assert.equal(done.error?.code, 'INVALID_SETTINGS');
      assert.match(String(done.error?.message), /bitrate_kbps: applies to a lossy output only.*alac/);
      assert.equal(done.enhancement_params.speech_enhancement, undefined, 'nothing was processed');
    });
  });
});
