// Bodies sent as an attacker would: nesting deep enough to overflow a recursive writer, forms over
// their limits, member names that are Object.prototype's own, and a disk that fills during an upload.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import FormData from 'form-data';
import { request } from 'undici';
import { HttpError, sendErrorSafely } from '../../src/engine/http/http-error';
import { makeWav } from '../fixtures/media';
import {
  AUDIO_BODY as AUDIO_SETTINGS,
  call,
  KEY,
  metadata,
  startTestEngine,
  stored,
  upload,
  type TestEngine,
} from './helpers';
import { detailText, issues } from './answers';

const AUDIO_BODY = { ...AUDIO_SETTINGS, file_download_url: 'http://127.0.0.1:9/talk.wav' };
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const wav = makeWav(0.2, 8_000);

describe('engine: hostile bodies', function () {
  let engine: TestEngine;
  before(async () => {
    engine = await startTestEngine({ limits: { uploadMedia: 1_000 } });
  });
  after(async () => {
    await engine.dispose();
  });

  const enhanceJson = (text: string) =>
    call(`${engine.url}/v1/media/enhance-json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: text,
    });

  describe('nesting deep enough to overflow a recursive JSON writer', function () {
    it('answers 422 to a 4500-deep array posted to enhance-json, quoting a short excerpt, and keeps serving', async () => {
      const res = await enhanceJson(nested(4500));
      assert.equal(res.status, 422);
      assert.deepEqual(issues(res.json)[0].loc, ['body']);
      assert.equal(issues(res.json)[0].type, 'type_error.dict');
      assert.ok(res.text.length < 1_000, `the answer quotes an excerpt, not the input (${res.text.length} bytes)`);
      assert.match(issues(res.json)[0].input as string, /^\[\[\[.*…$/);
      assert.equal((await metadata(engine, 'still-here')).status, 404, 'the engine still answers');
    });

    it('answers 422 to a 6000-deep media_enhancement part on /v2/medias, and to a deep member of enhance-json', async () => {
      const res = await upload(engine, wav, 'deep.wav', { media_enhancement: nested(6000) });
      assert.equal(res.status, 422);
      assert.deepEqual(issues(res.json)[0].loc, ['body', 'media_enhancement']);
      assert.ok(res.text.length < 1_000);
      const member = await enhanceJson(
        JSON.stringify({ ...AUDIO_BODY, file_name: 'x' }).replace('"x"', nested(10_000)),
      );
      assert.equal(member.status, 422);
      assert.deepEqual(issues(member.json)[0].loc, ['body', 'file_name']);
      assert.ok(member.text.length < 1_000);
      assert.deepEqual((await stored(engine)).incoming, []);
    });

    it('quotes at most a short excerpt of a long refused value, and a small one whole', async () => {
      const long = await enhanceJson(JSON.stringify({ ...AUDIO_BODY, model_arch: 'L'.repeat(60_000) }));
      assert.equal(long.status, 422);
      assert.ok((issues(long.json)[0].input as string).length <= 121, 'at most 120 characters and an ellipsis');
      const small = await enhanceJson(JSON.stringify({ ...AUDIO_BODY, model_arch: { name: 'LARK' } }));
      assert.deepEqual(issues(small.json)[0].input, { name: 'LARK' });
    });

    it('survives an access log that throws: the answer is sent and the fault is logged', async () => {
      const throwing = await startTestEngine({
        onRequest: () => {
          throw new RangeError('the log broke');
        },
      });
      try {
        assert.equal((await metadata(throwing, 'x')).status, 404);
        assert.equal((await enhanceJsonOn(throwing, nested(4500))).status, 422);
        assert.ok(throwing.errorLines.some((l) => /access log failed: the log broke/.test(l)));
      } finally {
        await throwing.dispose();
      }
    });

    it('an error answer that cannot be written ends as a bare 500 and a log line, never a thrown error', async () => {
      // A detail no JSON writer can serialize stands for any fault on the way out.
      const logged: string[] = [];
      const server = createServer((_req, res) =>
        sendErrorSafely(res, new HttpError(422, [{ loc: ['body'], msg: 'x', type: 'x', input: 10n }]), (line) =>
          logged.push(line),
        ),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const res = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
        assert.equal(res.statusCode, 500);
        assert.equal(await res.body.text(), 'internal error');
        assert.match(logged[0], /could not write a 422 answer: .*BigInt/);
      } finally {
        server.close();
      }
    });
  });

  describe('multipart forms over their limits', function () {
    const fields = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`extra${i}`, 'x']));
    /** A form as a client could build it: parts in order, names repeated if it likes. */
    const form = (parts: [name: string, value: string | Buffer][]) => {
      const data = new FormData();
      for (const [name, value] of parts)
        data.append(
          name,
          value,
          Buffer.isBuffer(value) ? { filename: `${name}.wav`, contentType: 'audio/wav' } : undefined,
        );
      return call(`${engine.url}/v2/medias`, {
        method: 'POST',
        headers: { ...(data.getHeaders() as Record<string, string>), 'x-api-key': KEY },
        body: data.getBuffer(),
      });
    };

    it('refuses more than 10 text parts before media_enhancement with 422 naming the limit, never processing with defaults', async () => {
      const before = await stored(engine);
      const res = await upload(engine, wav, 'many.wav', {
        ...fields(10),
        media_enhancement: JSON.stringify({ loudness_target: -30 }),
      });
      assert.equal(res.status, 422);
      assert.match(issues(res.json)[0].msg, /more than (10 text parts|11 parts \(1 file and 10 text parts\))/);
      assert.deepEqual(await stored(engine), before, 'no media, no partial file');
      // Within the limit, the settings apply.
      const within = await upload(engine, wav, 'few.wav', {
        ...fields(9),
        media_enhancement: JSON.stringify({ loudness_target: -30 }),
      });
      assert.equal(within.status, 201);
      assert.equal(within.json.enhancement_params.loudness_target, -30);
    });

    it('refuses a second file part, more than 11 parts, a text part over 64 KiB and a repeated part, naming each', async () => {
      const before = await stored(engine);
      const files = await form([
        ['file', wav],
        ['file', wav],
      ]);
      assert.equal(files.status, 422);
      assert.match(issues(files.json)[0].msg, /more than 1 file part/);

      const parts = await upload(engine, wav, 'parts.wav', fields(11));
      assert.equal(parts.status, 422);
      assert.match(issues(parts.json)[0].msg, /more than (10 text parts|11 parts \(1 file and 10 text parts\))/);

      const big = await upload(engine, wav, 'big.wav', {
        media_enhancement: `{"loudness_target": -30${' '.repeat(70_000)}}`,
      });
      assert.equal(big.status, 413);
      assert.match(detailText(big.json), /"media_enhancement" is larger than the 65536 bytes/);

      const repeated = await form([
        ['media_enhancement', '{"loudness_target": -30}'],
        ['media_enhancement', '{"loudness_target": -20}'],
        ['file', wav],
      ]);
      assert.equal(repeated.status, 422);
      assert.deepEqual(issues(repeated.json)[0].loc, ['body', 'media_enhancement']);
      assert.match(issues(repeated.json)[0].msg, /more than once/);
      assert.deepEqual(await stored(engine), before, 'no media, no partial file');
    });
  });

  describe('member names that are Object.prototype properties', function () {
    const NAMES = ['__proto__', 'constructor', 'valueOf', 'hasOwnProperty', 'toString', 'isPrototypeOf'];

    for (const [path, part] of [
      ['/v2/medias', 'media_enhancement'],
      ['/v1/videos', 'video_enhancement'],
    ] as const) {
      it(`${part}: each is an unknown member, 422 naming it`, async () => {
        for (const name of NAMES) {
          const res = await upload(engine, wav, 'proto.wav', { [part]: `{${JSON.stringify(name)}: 1}` }, path);
          assert.equal(res.status, 422, `${name}: ${res.text}`);
          assert.deepEqual(res.json.detail, [
            { loc: ['body', part, name], msg: 'extra fields not permitted', type: 'value_error.extra', input: 1 },
          ]);
        }
      });
    }

    it('enhance-json: extra constructor and __proto__ members are refused like any extra', async () => {
      const text = JSON.stringify(AUDIO_BODY).replace(
        /}$/,
        ', "constructor": {"x": 1}, "__proto__": {"file_name": "evil"}}',
      );
      const res = await enhanceJson(text);
      assert.equal(res.status, 422);
      assert.deepEqual(
        issues(res.json)
          .map((d) => d.loc.join('.'))
          .sort(),
        ['body.__proto__', 'body.constructor'],
      );
      assert.ok(issues(res.json).every((d) => d.msg === 'extra fields not permitted'));
    });

    it('multipart parts named __proto__ or constructor are only names: the upload is served with its settings', async () => {
      const parts = Object.fromEntries([
        ['__proto__', '{"x": 1}'],
        ['constructor', 'y'],
        ['media_enhancement', '{"true_peak": -3}'],
      ]);
      const res = await upload(engine, wav, 'names.wav', parts);
      assert.equal(res.status, 201);
      assert.equal(res.json.enhancement_params.true_peak, -3);
    });
  });

  describe('a file name holding a double quote', function () {
    /** A form as a client that quotes names as they are writes it, with `content` as the file. */
    function rawForm(fileName: string, content: Buffer): { body: Buffer; headers: Record<string, string> } {
      const boundary = 'b0undary7e1f';
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        ),
        content,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      return {
        body,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'x-api-key': KEY },
      };
    }

    it('is read as the client meant it, unescaped or escaped, and the file stored byte for byte', async () => {
      // The file's own bytes hold what looks like a part header with a quoted name: they are never mended.
      const lookalike = Buffer.from('\r\nContent-Disposition: form-data; name="file"; filename="a"b.wav"\r\n\r\n');
      const content = Buffer.concat([wav, lookalike]);
      for (const [sent, read] of [
        ['say "hi".wav', 'say "hi".wav'],
        ['say \\"hi\\".wav', 'say "hi".wav'],
      ]) {
        const { body, headers } = rawForm(sent, content);
        const res = await call(`${engine.url}/v2/medias`, { method: 'POST', headers, body });
        assert.equal(res.status, 201, `${sent}: ${res.text}`);
        assert.equal(res.json.file_name, read);
        const stored = await fsp.readFile(join(engine.dataDir, 'media', res.json.uid, 'input'));
        assert.ok(stored.equals(content), 'the file is stored as it was sent');
      }
    });
  });

  describe('a part header longer than the parser reads', function () {
    it('is refused 422 naming the bound, on both upload routes, with nothing stored', async () => {
      // 127 KB of `; filename="` with no closing quote: a search for the closing quote that backtracks
      // would take a second on it.
      const boundary = 'b0undary7e1f';
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"${'; filename="'.repeat(10_600)}x\r\n\r\n`,
        ),
        wav,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const headers = { 'content-type': `multipart/form-data; boundary=${boundary}`, 'x-api-key': KEY };
      for (const path of ['/v2/medias', '/v1/videos']) {
        const before = await stored(engine);
        const res = await call(`${engine.url}${path}`, { method: 'POST', headers, body });
        assert.equal(res.status, 422, res.text);
        assert.deepEqual(issues(res.json), [
          {
            loc: ['body'],
            msg: "a form part's headers are longer than the 16384 bytes this service reads",
            type: 'value_error.multipart.limit',
          },
        ]);
        assert.deepEqual(await stored(engine), before);
      }
    });
  });

  describe('a disk that fills during an upload', function () {
    it('answers 507 with Retry-After and the rate-limit headers, naming the cause, and keeps no partial file', async () => {
      const full = await startTestEngine({ faults: { diskFullRate: 1 }, limits: { uploadMedia: 10 } });
      try {
        const res = await upload(full, makeWav(5, 48_000), 'big.wav');
        assert.equal(res.status, 507);
        assert.match(detailText(res.json), /no room left .*disk is full.*retry later/);
        assert.ok(Number(res.headers['retry-after']) > 0);
        assert.equal(res.headers['x-ratelimit-limit'], '10');
        assert.equal(res.headers['x-ratelimit-used'], '1');
        assert.deepEqual(await stored(full), { media: [], incoming: [] });
      } finally {
        await full.dispose();
      }
    });
  });

  async function enhanceJsonOn(target: TestEngine, text: string) {
    return call(`${target.url}/v1/media/enhance-json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: text,
    });
  }
});
