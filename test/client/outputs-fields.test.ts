import assert from 'node:assert/strict';
import {
  EXTENSION_OF,
  LOUDNESS_ONLY,
  OUTPUT_ENCODING,
  SEVERAL_OUTPUTS,
  usesExtension,
} from '../../src/contract/extensions';
import { appliedOutputsOf, checkEnhancementSettings, checkStep } from '../../src/contract/fields';
import { describeIssue, type FieldIssue } from '../../src/contract/field-issue';
import { checkSettingsForInput } from '../../src/contract/settings-combinations';

// The several-outputs extension's fields (docs/interface.md#several-outputs), as the client checks them
// before sending and the engine answers them with a 422: every issue names its loc, the value and the rule.

const lines = (issues: FieldIssue[]) => issues.map(describeIssue);

describe('several outputs: the fields', () => {
  it('takes 1 to 4 named outputs in media_enhancement and video_enhancement', () => {
    const outputs = [
      { name: 'feed', transcode: 'MP3', bitrate_kbps: 128, bitrate_mode: 'CBR', sample_rate_hz: 44100 },
      { name: 'master', transcode: 'WAV' },
      { name: 'mono_64', transcode: 'MP3', bitrate_kbps: 64, downmix_mono: true },
      { name: '4-soundtrack' },
    ];
    assert.deepEqual(checkEnhancementSettings({ outputs }, 'media_enhancement'), []);
    assert.deepEqual(checkEnhancementSettings({ outputs: outputs.slice(0, 1) }, 'media_enhancement'), []);
    assert.deepEqual(checkEnhancementSettings({ outputs: [{ name: 'soundtrack' }] }, 'video_enhancement'), []);
  });

  it('refuses a list that is not 1 to 4 outputs, or not a list', () => {
    const many = Array.from({ length: 5 }, (_, i) => ({ name: `o${i}` }));
    assert.deepEqual(lines(checkEnhancementSettings({ outputs: [] }, 'media_enhancement')), [
      'body.media_enhancement.outputs: ensure this list has from 1 to 4 items (the outputs beyond the ENHANCED file) (got [])',
    ]);
    const [tooMany] = checkEnhancementSettings({ outputs: many }, 'media_enhancement');
    assert.deepEqual(tooMany.loc, ['body', 'media_enhancement', 'outputs']);
    assert.equal(tooMany.type, 'value_error.list.max_items');
    const [notList] = checkEnhancementSettings({ outputs: { name: 'feed' } }, 'video_enhancement');
    assert.deepEqual(notList.loc, ['body', 'video_enhancement', 'outputs']);
    assert.match(notList.msg, /not a valid list/);
  });

  it('names the loc, the value and the rule of each bad member of an output', () => {
    const issues = checkEnhancementSettings(
      {
        outputs: [
          { name: 'feed', transcode: 'OGG' },
          { name: 'Feed' },
          { transcode: 'MP3' },
          { name: 'enhanced', bitrate_kbps: 500, colour: 'red' },
        ],
      },
      'media_enhancement',
    );
    assert.deepEqual(lines(issues), [
      "body.media_enhancement.outputs.0.transcode: value is not a valid enumeration member; permitted: 'MP3', 'WAV' (got \"OGG\")",
      'body.media_enhancement.outputs.1.name: string does not match regex "^[a-z0-9][a-z0-9_-]*$" (lower-case letters, digits, "_" and "-", starting with a letter or digit) (got "Feed")',
      'body.media_enhancement.outputs.2.name: field required',
      'body.media_enhancement.outputs.3.name: "enhanced" is the name of the interface\'s ENHANCED step; choose another name (got "enhanced")',
      'body.media_enhancement.outputs.3.bitrate_kbps: ensure this value is less than or equal to 320 (got 500)',
      'body.media_enhancement.outputs.3.colour: extra fields not permitted (got "red")',
    ]);
  });

  it('refuses names that are too long, not strings, reserved or repeated', () => {
    const issues = checkEnhancementSettings(
      { outputs: [{ name: 'a'.repeat(33) }, { name: 7 }, { name: 'pre' }, { name: 'feed' }] },
      'media_enhancement',
    );
    assert.deepEqual(
      issues.map((i) => [i.loc.join('.'), i.type]),
      [
        ['body.media_enhancement.outputs.0.name', 'value_error.any_str.length'],
        ['body.media_enhancement.outputs.1.name', 'type_error.str'],
        ['body.media_enhancement.outputs.2.name', 'value_error.reserved_name'],
      ],
    );
    assert.deepEqual(checkEnhancementSettings({ outputs: [{ name: 'a'.repeat(32) }] }, 'media_enhancement'), []);
    const [twice] = checkEnhancementSettings({ outputs: [{ name: 'feed' }, { name: 'feed' }] }, 'media_enhancement');
    assert.deepEqual(twice.loc, ['body', 'media_enhancement', 'outputs', 1, 'name']);
    assert.match(twice.msg, /an earlier output has this name/);
  });

  it('keeps the lossless-output rule per output: WAV, or a lossless input kept as it is, takes no encoding', () => {
    const [wav] = checkEnhancementSettings(
      { outputs: [{ name: 'master', transcode: 'WAV', sample_rate_hz: 48000 }] },
      'media_enhancement',
    );
    assert.deepEqual(wav.loc, ['body', 'media_enhancement', 'outputs', 0, 'sample_rate_hz']);
    assert.match(wav.msg, /applies to a lossy output only.*transcode WAV/);
    // Known once the input is recognised: a FLAC input, an output without transcode, stays FLAC.
    const settings = {
      outputs: [
        { name: 'feed', transcode: 'MP3' as const, bitrate_kbps: 96 },
        { name: 'same', bitrate_kbps: 96 },
      ],
    };
    assert.deepEqual(lines(checkSettingsForInput(settings, 'media_enhancement', { kind: 'audio', ext: 'flac' })), [
      'body.media_enhancement.outputs.1.bitrate_kbps: applies to a lossy output only (MP3, AAC, Vorbis, Opus); the input is FLAC, kept as it is, which is lossless: ask transcode MP3, or leave it out (got 96)',
    ]);
    assert.deepEqual(checkSettingsForInput(settings, 'media_enhancement', { kind: 'audio', ext: 'mp3' }), []);
    assert.deepEqual(checkSettingsForInput(settings, 'video_enhancement', { kind: 'video', ext: 'mp4' }), []);
  });

  it('is an extension: refused, naming it, unless the service declares several-outputs (and output-encoding for encodings)', () => {
    assert.equal(EXTENSION_OF.get('outputs'), SEVERAL_OUTPUTS);
    assert.ok(usesExtension({ outputs: [{ name: 'feed' }] }));
    const settings = { outputs: [{ name: 'feed', transcode: 'MP3', bitrate_kbps: 128 }] };
    const [undeclared] = checkEnhancementSettings(settings, 'media_enhancement', [OUTPUT_ENCODING, LOUDNESS_ONLY]);
    assert.deepEqual(undeclared.loc, ['body', 'media_enhancement', 'outputs']);
    assert.match(undeclared.msg, /"several-outputs" extension, which this service does not declare/);
    const [noEncoding] = checkEnhancementSettings(settings, 'media_enhancement', [SEVERAL_OUTPUTS]);
    assert.deepEqual(noEncoding.loc, ['body', 'media_enhancement', 'outputs', 0, 'bitrate_kbps']);
    assert.match(noEncoding.msg, /"output-encoding" extension/);
    assert.deepEqual(checkEnhancementSettings(settings, 'media_enhancement', [SEVERAL_OUTPUTS, OUTPUT_ENCODING]), []);
  });

  it("reads a COMPLETED media's outputs from its metadata, leaving out what is not one (the list as asked, a malformed entry)", () => {
    const feed = { name: 'feed', file_name: 'talk_feed.mp3', output_encoding: { codec: 'mp3', bitrate_kbps: 96 } };
    assert.deepEqual(
      appliedOutputsOf({
        enhancement_params: {
          outputs: [feed, { name: 'master', transcode: 'WAV' }, { name: 'Bad', file_name: 'x' }, null, 'feed'],
        },
      }),
      [feed],
    );
    for (const metadata of [undefined, null, {}, { enhancement_params: { outputs: 'feed' } }])
      assert.deepEqual(appliedOutputsOf(metadata), []);
  });

  it('takes a step of the interface or a well-formed output name, and refuses anything else naming the rule', () => {
    for (const step of [undefined, 'ENHANCED', 'PRE', 'feed', 'master_48k', '0-a'])
      assert.deepEqual(checkStep(step), [], String(step));
    for (const [step, rule] of [
      ['POST', /does not match regex/],
      ['enhanced', /name of the interface's ENHANCED step/],
      ['', /between 1 and 32 characters/],
      ['a'.repeat(33), /between 1 and 32 characters/],
      ['../x', /does not match regex/],
      [3, /str type expected/],
    ] as const) {
      const [issue] = checkStep(step);
      assert.deepEqual(issue.loc, ['query', 'step']);
      assert.match(issue.msg, rule);
      assert.match(issue.msg, /permitted: 'ENHANCED', 'PRE', or the name of one of the media's outputs/);
      assert.equal(issue.input, step);
    }
  });
});
