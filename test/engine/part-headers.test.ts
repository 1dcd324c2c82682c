// The part-header mender: it escapes the double quotes of a quoted file name and changes nothing else,
// in time linear in what it reads, and refuses a part header block longer than the parser reads.
import assert from 'node:assert/strict';
import { MAX_PART_HEADER_BYTES, mendPartHeaders, PartHeadersTooLong } from '../../src/engine/http/part-headers';

const BOUNDARY = 'b0undary7e1f';

/** A form whose one part has `headers` (lines without their CRLF) and the content `DATA`. */
const form = (...headers: string[]) =>
  Buffer.from(`--${BOUNDARY}\r\n${headers.join('\r\n')}\r\n\r\nDATA\r\n--${BOUNDARY}--\r\n`, 'latin1');
const mended = (body: Buffer) => mendPartHeaders(body, BOUNDARY).toString('latin1');

/** The CPU time (µs) of mending `body` `times` times. */
function cpuOf(body: Buffer, times: number): number {
  const before = process.cpuUsage();
  for (let i = 0; i < times; i++) mendPartHeaders(body, BOUNDARY);
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

describe('engine: part-header mender', () => {
  it('escapes the quotes inside a quoted file name, keeps a quoted-pair, and leaves every other byte', () => {
    const disposition = (name: string) => `Content-Disposition: form-data; name="file"; filename="${name}"`;
    for (const [sent, read] of [
      [form(disposition('say "hi".wav')), form(disposition('say \\"hi\\".wav'))],
      [form(disposition('say \\"hi\\".wav')), form(disposition('say \\"hi\\".wav'))],
      [form('X-Note: "a"b"'), form('X-Note: "a"b"')],
      // The filename is not the last parameter; nothing closes it.
      [form(`${disposition('a"b.wav')}; size=3`), form(`${disposition('a"b.wav')}; size=3`)],
      [
        form('Content-Disposition: form-data; filename="a"b.wav'),
        form('Content-Disposition: form-data; filename="a"b.wav'),
      ],
      // A delimiter-like line inside a header block starts no second block.
      [form(`--${BOUNDARY}`, disposition('a"b.wav')), form(`--${BOUNDARY}`, disposition('a\\"b.wav'))],
    ])
      assert.equal(mended(sent), read.toString('latin1'));
  });

  it(`refuses a part header block over ${MAX_PART_HEADER_BYTES} bytes, its blank line included, even one cut by the end of what is held`, () => {
    const line = (bytes: number) => `X-Fill: ${'a'.repeat(bytes - 'X-Fill: '.length)}`;
    assert.doesNotThrow(() => mendPartHeaders(form(line(MAX_PART_HEADER_BYTES - 4)), BOUNDARY));
    assert.throws(() => mendPartHeaders(form(line(MAX_PART_HEADER_BYTES - 3)), BOUNDARY), PartHeadersTooLong);
    const cut = (bytes: number) => Buffer.from(`--${BOUNDARY}\r\n${line(bytes)}`, 'latin1');
    assert.throws(() => mendPartHeaders(cut(MAX_PART_HEADER_BYTES + 1), BOUNDARY), /longer than the 16384 bytes/);
    assert.doesNotThrow(() => mendPartHeaders(cut(MAX_PART_HEADER_BYTES), BOUNDARY), 'not over it yet');
  });

  it('mends in time linear in the header: a line of unclosed `; filename="` twice as long costs about twice as much', () => {
    // A backtracking search for the line's closing quote costs the square of its length (4 times as
    // much here). Both lines are within the bound; each is mended often enough to measure, best of 5.
    const attack = (bytes: number) =>
      form(`Content-Disposition: form-data; name="file"${'; filename="'.repeat(bytes / 12)}x`);
    const [single, double] = [attack(6 * 1024), attack(12 * 1024)];
    let times = 1;
    while (cpuOf(single, times) < 20_000) times *= 2;
    const best = [Infinity, Infinity];
    for (let round = 0; round < 5; round++) {
      best[0] = Math.min(best[0], cpuOf(single, times));
      best[1] = Math.min(best[1], cpuOf(double, times));
    }
    const ratio = best[1] / best[0];
    assert.ok(ratio < 3, `twice the line cost ${ratio.toFixed(2)} times as much (linear: 2, quadratic: 4)`);
  });
});
