// The dereverb extension's field (`dereverb`, the de-reverberation's strength 0..100), as the client checks
// it before sending and the engine answers it with a 422: every issue names its loc, the value and the rule.
import assert from 'node:assert/strict';
import { DEREVERB, ENGINE_EXTENSIONS, EXTENSION_OF, usesExtension } from '../../src/contract/extensions';
import { checkEnhancementSettings } from '../../src/contract/fields';
import { describeIssue } from '../../src/contract/field-issue';

const issues = (
  settings: unknown,
  part: 'media_enhancement' | 'video_enhancement' = 'media_enhancement',
  offered?: string[],
) => checkEnhancementSettings(settings, part, offered).map(describeIssue);

describe('dereverb: the field', () => {
  it('is the built-in engine\'s "dereverb" extension, which it declares', () => {
    assert.equal(EXTENSION_OF.get('dereverb'), DEREVERB);
    assert.ok(ENGINE_EXTENSIONS.includes(DEREVERB));
    assert.ok(usesExtension({ dereverb: 100 }));
  });

  it('takes a whole strength from 0 to 100 in media_enhancement', () => {
    for (const dereverb of [0, 1, 50, 100]) assert.deepEqual(issues({ dereverb }), [], `dereverb ${dereverb}`);
  });

  it('refuses a strength outside 0..100, a fraction or a string, naming the member, the value and the rule', () => {
    assert.deepEqual(issues({ dereverb: 101 }), [
      'body.media_enhancement.dereverb: ensure this value is less than or equal to 100 (got 101)',
    ]);
    assert.deepEqual(issues({ dereverb: -1 }), [
      'body.media_enhancement.dereverb: ensure this value is greater than or equal to 0 (got -1)',
    ]);
    assert.match(issues({ dereverb: 2.5 })[0], /^body\.media_enhancement\.dereverb: .*integer.*\(got 2\.5\)$/);
    assert.match(issues({ dereverb: '50' })[0], /^body\.media_enhancement\.dereverb: .*\(got "50"\)$/);
  });

  it('refuses it to a service that does not declare the extension, and in video_enhancement', () => {
    assert.match(
      issues({ dereverb: 100 }, 'media_enhancement', [])[0],
      /"dereverb" extension, which this service does not declare/,
    );
    assert.deepEqual(issues({ dereverb: 100 }, 'video_enhancement'), [
      'body.video_enhancement.dereverb: extra fields not permitted (got 100)',
    ]);
  });
});
