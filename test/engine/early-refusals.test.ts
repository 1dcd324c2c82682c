// Settings that cannot apply together, or to the file sent, answered 422 by the engine's upload route
// (src/contract/settings-combinations.ts) naming the member, its value and the rule, before the upload is
// kept: no media, no leftover of the upload, never a FAILED media later.
import assert from 'node:assert/strict';
import { ffmpegMade, makeMp4, makeWav } from '../fixtures/media';
import { issues } from './answers';
import { startTestEngine, stored, upload, type TestEngine } from './helpers';

describe('engine: settings that cannot apply are refused at upload', function () {
  this.timeout(60_000);
  let engine: TestEngine;
  before(async () => {
    engine = await startTestEngine({ limits: { uploadMedia: null } });
  });
  after(async () => {
    await engine.dispose();
  });

  const wav = makeWav(0.5, 16_000);
  const flac = () => ffmpegMade('talk.flac', ['-f', 'lavfi', '-i', 'sine=frequency=300:duration=0.5']);

  const cases: {
    what: string;
    file: () => Buffer;
    name: string;
    settings: object;
    member: string;
    type: string;
    rule: RegExp;
  }[] = [
    {
      what: 'a trim with LOUDNESS_ONLY (from the request alone)',
      file: () => wav,
      name: 'talk.wav',
      settings: { enhancement_model: 'LOUDNESS_ONLY', trim_pauses_s: 1 },
      member: 'trim_pauses_s',
      type: 'value_error.speech_model_only',
      rule: /voice activity a speech model measures, and LOUDNESS_ONLY runs no speech model/,
    },
    {
      what: 'dereverb with LOUDNESS_ONLY (from the request alone)',
      file: () => wav,
      name: 'talk.wav',
      settings: { enhancement_model: 'LOUDNESS_ONLY', dereverb: 60 },
      member: 'dereverb',
      type: 'value_error.speech_model_only',
      rule: /reduces room echo in the speech enhancement chain, and LOUDNESS_ONLY runs no speech model/,
    },
    {
      what: "a trim of a video's soundtrack (once the upload is known to be an MP4)",
      file: makeMp4,
      name: 'clip.mp4',
      settings: { enhancement_model: 'FINCH', trim_pauses_s: 1 },
      member: 'trim_pauses_s',
      type: 'value_error.audio_only',
      rule: /applies to audio only; this MP4 video's soundtrack keeps its length with the picture/,
    },
    {
      what: 'a bitrate with transcode WAV (from the request alone)',
      file: () => wav,
      name: 'talk.wav',
      settings: { transcode: 'WAV', bitrate_kbps: 128 },
      member: 'bitrate_kbps',
      type: 'value_error.lossless_output',
      rule: /applies to a lossy output only .*transcode WAV/,
    },
    {
      what: 'a bitrate for a FLAC kept FLAC (once the upload is known to be a FLAC)',
      file: flac,
      name: 'talk.flac',
      settings: { bitrate_kbps: 128 },
      member: 'bitrate_kbps',
      type: 'value_error.lossless_output',
      rule: /applies to a lossy output only .*the input is FLAC, kept as it is/,
    },
  ];
  for (const { what, file, name, settings, member, type, rule } of cases) {
    it(`answers 422 for ${what}, naming ${member}, its value and the rule, and keeps nothing`, async () => {
      const before = await stored(engine);
      const res = await upload(engine, file(), name, { media_enhancement: JSON.stringify(settings) });
      assert.equal(res.status, 422, res.text);
      const [issue, ...more] = issues(res.json);
      assert.deepEqual(more, [], 'the one impossible member');
      assert.deepEqual(issue.loc, ['body', 'media_enhancement', member]);
      assert.equal(issue.type, type);
      assert.equal(issue.input, (settings as Record<string, unknown>)[member]);
      assert.match(issue.msg, rule);
      assert.deepEqual(await stored(engine), before, 'no media, no partial file');
    });
  }

  it('takes each of those members where it can apply: a trim of a WAV with FINCH, a bitrate for a FLAC sent as MP3', async () => {
    const trim = await upload(engine, wav, 'talk.wav', {
      media_enhancement: JSON.stringify({ enhancement_model: 'FINCH', trim_pauses_s: 1 }),
    });
    assert.equal(trim.status, 201, trim.text);
    const mp3 = await upload(engine, flac(), 'talk.flac', {
      media_enhancement: JSON.stringify({ enhancement_model: 'FINCH', transcode: 'MP3', bitrate_kbps: 128 }),
    });
    assert.equal(mp3.status, 201, mp3.text);
  });
});
