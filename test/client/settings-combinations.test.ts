// Settings that cannot apply together, or to the file sent (src/contract/settings-combinations.ts): each
// rule refused with an issue naming the member, its value and the rule, as the client and the nodes refuse
// it before sending and the engine answers it (422) before anything is kept.
import assert from 'node:assert/strict';
import { checkEnhancementSettings } from '../../src/contract/fields';
import { describeIssue, type FieldIssue } from '../../src/contract/field-issue';
import { checkSettingsForInput, checkSettingsTogether } from '../../src/contract/settings-combinations';

const lines = (issues: FieldIssue[]) => issues.map(describeIssue);
const FLAC = { kind: 'audio', ext: 'flac' } as const;
const MP3 = { kind: 'audio', ext: 'mp3' } as const;
const MP4 = { kind: 'video', ext: 'mp4' } as const;

describe('settings that cannot apply together or to the file', () => {
  it('refuses trim_pauses_s with LOUDNESS_ONLY, which measures no voice activity, from the request alone', () => {
    const issues = checkEnhancementSettings(
      { enhancement_model: 'LOUDNESS_ONLY', trim_pauses_s: 1.5 },
      'media_enhancement',
    );
    assert.deepEqual(lines(issues), [
      'body.media_enhancement.trim_pauses_s: finds pauses by the voice activity a speech model measures, and LOUDNESS_ONLY runs no speech model: choose FINCH, LARK or LARK_V2, or leave it out (got 1.5)',
    ]);
    assert.equal(issues[0].type, 'value_error.speech_model_only');
    for (const enhancement_model of ['FINCH', 'LARK', 'LARK_V2', undefined])
      assert.deepEqual(checkEnhancementSettings({ enhancement_model, trim_pauses_s: 1.5 }, 'media_enhancement'), []);
    assert.deepEqual(checkEnhancementSettings({ enhancement_model: 'LOUDNESS_ONLY' }, 'media_enhancement'), []);
  });

  it('refuses trim_pauses_s for a video once its type is known, and takes it for any audio file', () => {
    const settings = { enhancement_model: 'FINCH', trim_pauses_s: 2 };
    assert.deepEqual(checkEnhancementSettings(settings, 'media_enhancement'), [], 'the request alone cannot tell');
    const issues = checkSettingsForInput(settings, 'media_enhancement', MP4);
    assert.deepEqual(lines(issues), [
      "body.media_enhancement.trim_pauses_s: applies to audio only; this MP4 video's soundtrack keeps its length with the picture: leave it out, or send the soundtrack alone (got 2)",
    ]);
    assert.equal(issues[0].type, 'value_error.audio_only');
    for (const input of [MP3, FLAC, { kind: 'audio', ext: 'wav' } as const])
      assert.deepEqual(checkSettingsForInput(settings, 'media_enhancement', input), [], input.ext);
  });

  it('refuses an encoding choice with transcode WAV, in the settings and in each output; downmix_mono false asks nothing', () => {
    const settings = {
      transcode: 'WAV',
      bitrate_kbps: 128,
      downmix_mono: false,
      outputs: [
        { name: 'feed', transcode: 'MP3', bitrate_kbps: 96 },
        { name: 'master', transcode: 'WAV', sample_rate_hz: 48000 },
      ],
    };
    const issues = checkEnhancementSettings(settings, 'media_enhancement');
    assert.deepEqual(
      issues.map((issue) => [issue.loc.join('.'), issue.type, issue.input]),
      [
        ['body.media_enhancement.bitrate_kbps', 'value_error.lossless_output', 128],
        ['body.media_enhancement.outputs.1.sample_rate_hz', 'value_error.lossless_output', 48000],
      ],
    );
    assert.match(
      issues[0].msg,
      /^applies to a lossy output only \(MP3, AAC, Vorbis, Opus\); transcode WAV, which is lossless/,
    );
  });

  it('refuses an encoding choice for a WAV, AIFF or FLAC kept as it is, once its type is known', () => {
    const settings = { bitrate_kbps: 96, outputs: [{ name: 'feed', transcode: 'MP3', bitrate_kbps: 96 }] };
    assert.deepEqual(lines(checkSettingsForInput(settings, 'media_enhancement', FLAC)), [
      'body.media_enhancement.bitrate_kbps: applies to a lossy output only (MP3, AAC, Vorbis, Opus); the input is FLAC, kept as it is, which is lossless: ask transcode MP3, or leave it out (got 96)',
    ]);
    assert.deepEqual(checkSettingsForInput({ ...settings, transcode: 'MP3' }, 'media_enhancement', FLAC), []);
    assert.deepEqual(checkSettingsForInput(settings, 'media_enhancement', MP3), []);
  });

  it('refuses a member once: one with an issue of its own, or not of this part, is not also refused together', () => {
    // Out of bounds, and with LOUDNESS_ONLY: the bound is the issue.
    const bounded = checkEnhancementSettings(
      { enhancement_model: 'LOUDNESS_ONLY', trim_pauses_s: 50 },
      'media_enhancement',
    );
    assert.deepEqual(
      bounded.map((issue) => issue.type),
      ['value_error.number.not_le'],
    );
    // Not a member of video_enhancement at all.
    const extra = checkEnhancementSettings(
      { enhancement_model: 'LOUDNESS_ONLY', trim_pauses_s: 1 },
      'video_enhancement',
    );
    assert.deepEqual(
      extra.map((issue) => issue.type),
      ['value_error.extra'],
    );
    // The rules of the file wait for it: none is decided by the request alone, and the other way round.
    assert.deepEqual(checkSettingsTogether({ trim_pauses_s: 1, bitrate_kbps: 96 }, 'media_enhancement'), []);
    assert.deepEqual(
      checkSettingsForInput({ enhancement_model: 'LOUDNESS_ONLY', trim_pauses_s: 1 }, 'media_enhancement', MP3),
      [],
    );
  });
});
