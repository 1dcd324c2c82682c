// One reading of a download's Content-Disposition, shared by the client and the sidebar's browser code:
// it gives back every name the engine and the sidebar routes write, and reads other services' forms.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { attachmentDisposition, fileNameFromDisposition } from '../../src/contract/attachment';

const ROOT = join(__dirname, '..', '..', '..');

describe('Content-Disposition: the file name read back', function () {
  it('gives back the exact name the engine wrote: plain, with quotes, and not ASCII', () => {
    for (const name of ['talk.wav', 'say "hi" bye.mp3', 'Ünïcödé talk (1).flac', '会议 录音.m4a', "it's (50%)*.wav"])
      assert.equal(fileNameFromDisposition(attachmentDisposition(name)), name);
  });

  it("reads other services' forms: a quoted name with escapes, a bare token, another charset; none at all", () => {
    assert.equal(fileNameFromDisposition('attachment; filename="a \\"b\\".wav"'), 'a "b".wav');
    assert.equal(fileNameFromDisposition('attachment; filename=plain.wav'), 'plain.wav');
    assert.equal(fileNameFromDisposition("attachment; filename*=iso-8859-1'en'cafe%20bar.wav"), 'cafe bar.wav');
    // filename* wins over filename (RFC 6266).
    assert.equal(fileNameFromDisposition('attachment; filename="a.wav"; filename*=UTF-8\'\'b%C3%A9.wav'), 'bé.wav');
    assert.equal(fileNameFromDisposition('attachment'), undefined);
    assert.equal(fileNameFromDisposition(undefined), undefined);
  });

  it("is the sidebar's reading too: the browser bundle holds it, and no parser of its own", () => {
    const bundle = readFileSync(join(ROOT, 'resources', 'media-enhance-sidebar.js'), 'utf8');
    assert.match(bundle, /function fileNameFromDisposition\(/);
    assert.doesNotMatch(bundle, /filename\\\*=UTF-8''\(\[\^;\]\+\)/);
  });
});
