import assert from 'node:assert/strict';
import { ENGINE_EXTENSIONS, MediaEnhanceClient, MediaEnhanceError } from '../../src';
import type { EnhanceJsonBody, EnhancementSettings } from '../../src';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';

const VALID_AUDIO: EnhanceJsonBody = {
  file_download_url: 'http://127.0.0.1:9/speech.wav',
  file_name: 'speech.wav',
  loudness_target_level: -16,
  loudness_peak_limit: -1,
  enhancement_level: 0.5,
  transcode_kind: null,
  model_arch: 'LARK_V2',
};

const longUrl = (length: number) => `http://127.0.0.1/${'a'.repeat(length - 'http://127.0.0.1/'.length)}`;

/** [field, value just inside the bounds, value just outside, the rule the error must state]. */
const AUDIO_BOUNDS: [keyof EnhanceJsonBody, unknown, unknown, RegExp][] = [
  ['file_download_url', longUrl(2083), longUrl(2084), /between 1 and 2083 characters/],
  ['file_download_url', 'https://127.0.0.1/a.wav', 'ftp://127.0.0.1/a.wav', /scheme/],
  ['file_download_url', 'http://127.0.0.1/a.wav', '', /between 1 and 2083/],
  ['file_name', '', 42, /str type expected/],
  ['loudness_target_level', -70, -71, /greater than or equal to -70/],
  ['loudness_target_level', -5, -4, /less than or equal to -5/],
  ['loudness_target_level', -16, -16.5, /not a valid integer/],
  ['loudness_peak_limit', -9, -10, /greater than or equal to -9/],
  ['loudness_peak_limit', 0, 1, /less than or equal to 0/],
  ['loudness_peak_limit', -1, '-1', /not a valid integer/],
  ['enhancement_level', 0, -0.01, /greater than or equal to 0/],
  ['enhancement_level', 1, 1.01, /less than or equal to 1/],
  ['transcode_kind', 'MP3', 'OGG', /permitted: 'MP3', 'WAV'/],
  ['transcode_kind', 'WAV', 'wav', /permitted/],
  ['model_arch', 'FINCH', 'lark', /permitted: 'FINCH', 'LARK', 'LARK_V2'/],
  ['model_arch', 'LARK', null, /permitted/],
];

const SETTINGS_BOUNDS: [keyof EnhancementSettings, unknown, unknown, RegExp][] = [
  ['loudness_target', -70, -71, /greater than or equal to -70/],
  ['loudness_target', -5, -4, /less than or equal to -5/],
  ['true_peak', -9, -10, /greater than or equal to -9/],
  ['true_peak', 0, 0.5, /not a valid integer/],
  ['enhancement_level', 1, 0, /greater than or equal to 1/],
  ['enhancement_level', 100, 101, /less than or equal to 100/],
  ['enhancement_model', 'LARK_V2', 'LARK_V3', /permitted/],
  ['transcode', 'MP3', 'FLAC', /permitted: 'MP3', 'WAV'/],
];

describe('client validation before sending', function () {
  let engine: TestEngine;
  let client: MediaEnhanceClient;
  const wav = makeWav(0.2, 16_000);

  before(async () => {
    engine = await startTestEngine();
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
  });
  after(async () => {
    await client.close();
    await engine.dispose();
  });

  it('refuses a wait timeout longer than a Node.js timer can hold, instead of timing out at once', async () => {
    const err = await client.waitForCompletion('any-uid', { timeoutMs: 2 ** 31 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof MediaEnhanceError);
    assert.equal(err.code, 'VALIDATION');
    assert.match(
      err.details[0],
      /^timeoutMs: must be a number of milliseconds from 1 to 2147483647 \(got 2147483648\)$/,
    );
  });

  for (const [field, inside, outside, rule] of AUDIO_BOUNDS) {
    it(`enhanceAudio ${field}: accepts ${JSON.stringify(inside)?.slice(0, 40)}, refuses ${JSON.stringify(outside)?.slice(0, 40)} without sending`, async () => {
      const sentBefore = engine.requests().length;
      const err = await client.enhanceAudio({ ...VALID_AUDIO, [field]: outside }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof MediaEnhanceError, `expected a MediaEnhanceError, got ${String(err)}`);
      assert.equal(err.code, 'VALIDATION');
      assert.equal(err.details.length, 1);
      assert.match(err.details[0], new RegExp(`^body\\.${field}: `));
      assert.match(err.details[0], rule);
      assert.match(err.message, /nothing was sent/);
      assert.equal(engine.requests().length, sentBefore, 'an invalid request reached the service');
      const ok = await client.enhanceAudio({ ...VALID_AUDIO, [field]: inside });
      assert.equal(typeof ok.generated_name, 'string');
    });
  }

  it('enhanceAudio requires transcode_kind to be present even when null, and lists every bad field at once', async () => {
    const { transcode_kind: _omitted, ...withoutTranscode } = VALID_AUDIO;
    const err = (await client
      .enhanceAudio({ ...withoutTranscode, loudness_target_level: 3, model_arch: 'X' } as unknown as EnhanceJsonBody)
      .catch((e: unknown) => e)) as MediaEnhanceError;
    assert.equal(err.code, 'VALIDATION');
    assert.deepEqual(err.details.map((d) => d.split(':')[0]).sort(), [
      'body.loudness_target_level',
      'body.model_arch',
      'body.transcode_kind',
    ]);
    assert.ok(err.details.some((d) => /transcode_kind: field required/.test(d)));
    assert.ok(
      err.details.some((d) => /\(got 3\)/.test(d)),
      'the offending value is named',
    );
  });

  for (const [member, inside, outside, rule] of SETTINGS_BOUNDS) {
    it(`uploadMedia media_enhancement.${member}: accepts ${JSON.stringify(inside)}, refuses ${JSON.stringify(outside)} without sending`, async () => {
      const sentBefore = engine.requests().length;
      const err = (await client
        .uploadMedia({ file: wav, fileName: 'a.wav', media_enhancement: { [member]: outside } })
        .catch((e: unknown) => e)) as MediaEnhanceError;
      assert.equal(err.code, 'VALIDATION');
      assert.match(err.details[0], new RegExp(`^body\\.media_enhancement\\.${member}: `));
      assert.match(err.details[0], rule);
      assert.equal(engine.requests().length, sentBefore);
      const ok = await client.uploadMedia({ file: wav, fileName: 'a.wav', media_enhancement: { [member]: inside } });
      assert.equal(typeof ok.uid, 'string');
    });
  }

  it('refuses members named like Object.prototype properties as unknown, naming them, without sending', async () => {
    const sentBefore = engine.requests().length;
    for (const name of ['valueOf', '__proto__', 'constructor', 'hasOwnProperty', 'toString']) {
      const settings = JSON.parse(`{${JSON.stringify(name)}: 1}`) as EnhancementSettings; // an own member, as a message's JSON gives it
      for (const call of [
        () => client.uploadMedia({ file: wav, media_enhancement: settings }),
        () => client.enhanceVideo({ file: wav, video_enhancement: settings }),
      ]) {
        const err = (await call().catch((e: unknown) => e)) as MediaEnhanceError;
        assert.equal(err.code, 'VALIDATION', `${name}: ${err.message}`);
        assert.match(
          err.details[0],
          new RegExp(`^body\\.(media|video)_enhancement\\.${name}: extra fields not permitted \\(got 1\\)$`),
        );
      }
    }
    const audio = JSON.parse(
      JSON.stringify(VALID_AUDIO).replace(/}$/, ', "constructor": 1, "__proto__": 2}'),
    ) as EnhanceJsonBody;
    const err = (await client.enhanceAudio(audio).catch((e: unknown) => e)) as MediaEnhanceError;
    assert.equal(err.code, 'VALIDATION');
    assert.deepEqual(err.details.map((d) => d.split(':')[0]).sort(), ['body.__proto__', 'body.constructor']);
    assert.equal(engine.requests().length, sentBefore);
  });

  it('refuses a deeply nested setting as VALIDATION, quoting only its start', async () => {
    const sentBefore = engine.requests().length;
    const deep = JSON.parse(`${'['.repeat(6000)}${']'.repeat(6000)}`) as unknown;
    const err = (await client
      .uploadMedia({ file: wav, media_enhancement: { loudness_target: deep } as unknown as EnhancementSettings })
      .catch((e: unknown) => e)) as MediaEnhanceError;
    assert.equal(err.code, 'VALIDATION', err.message);
    assert.match(err.details[0], /^body\.media_enhancement\.loudness_target: .*\(got \[\[\[+\.\.\.\)$/);
    assert.ok(err.message.length < 400, `${err.message.length} characters`);
    assert.equal(engine.requests().length, sentBefore);
  });

  it('refuses an output-encoding member to a service that does not declare the extension, naming it, without sending', async () => {
    const sentBefore = engine.requests().length;
    const err = (await client
      .uploadMedia({ file: wav, media_enhancement: { transcode: 'MP3', bitrate_kbps: 128, downmix_mono: true } })
      .catch((e: unknown) => e)) as MediaEnhanceError;
    assert.equal(err.code, 'VALIDATION', err.message);
    assert.deepEqual(
      err.details.map((d) => d.split(':')[0]),
      ['body.media_enhancement.bitrate_kbps', 'body.media_enhancement.downmix_mono'],
    );
    assert.match(err.details[0], /"output-encoding" extension, which this service does not declare.*\(got 128\)$/);
    assert.equal(engine.requests().length, sentBefore, 'nothing reached the service');
    // The same request to a client told that the service declares it (as the config node's built-in engine is).
    const declared = new MediaEnhanceClient({
      baseUrl: engine.url,
      apiKey: engine.apiKey,
      extensions: ENGINE_EXTENSIONS,
    });
    try {
      const bad = (await declared
        .uploadMedia({ file: wav, media_enhancement: { transcode: 'MP3', bitrate_kbps: 500 } })
        .catch((e: unknown) => e)) as MediaEnhanceError;
      assert.match(
        bad.details[0],
        /^body\.media_enhancement\.bitrate_kbps: ensure this value is less than or equal to 320/,
      );
      const ok = await declared.uploadMedia({
        file: wav,
        media_enhancement: { transcode: 'MP3', bitrate_kbps: 128, downmix_mono: true },
      });
      assert.equal(ok.enhancement_params?.bitrate_kbps, 128);
    } finally {
      await declared.close();
    }
  });

  it('refuses a trim with loudness only, which measures no voice activity, naming the member and the rule, without sending', async () => {
    const declared = new MediaEnhanceClient({
      baseUrl: engine.url,
      apiKey: engine.apiKey,
      extensions: ENGINE_EXTENSIONS,
    });
    try {
      const sentBefore = engine.requests().length;
      const err = (await declared
        .uploadMedia({ file: wav, media_enhancement: { enhancement_model: 'LOUDNESS_ONLY', trim_pauses_s: 1 } })
        .catch((e: unknown) => e)) as MediaEnhanceError;
      assert.equal(err.code, 'VALIDATION', err.message);
      assert.deepEqual(err.details, [
        'body.media_enhancement.trim_pauses_s: finds pauses by the voice activity a speech model measures, and LOUDNESS_ONLY runs no speech model: choose FINCH, LARK or LARK_V2, or leave it out (got 1)',
      ]);
      assert.equal(engine.requests().length, sentBefore, 'nothing reached the service');
    } finally {
      await declared.close();
    }
  });

  it('enhanceVideo refuses `transcode`, which only v2 uploads take', async () => {
    const err = (await client
      .enhanceVideo({ file: wav, video_enhancement: { transcode: 'MP3' } })
      .catch((e: unknown) => e)) as MediaEnhanceError;
    assert.equal(err.code, 'VALIDATION');
    assert.match(err.details[0], /^body\.video_enhancement\.transcode: extra fields not permitted/);
  });

  it('downloadFile refuses a malformed step, naming the allowed ones', async () => {
    const err = (await client
      .downloadFile('abc', { step: 'POST' as never })
      .catch((e: unknown) => e)) as MediaEnhanceError;
    assert.equal(err.code, 'VALIDATION');
    assert.match(
      err.details[0],
      /^query\.step: .*permitted: 'ENHANCED', 'PRE', or the name of .*outputs.*\(got "POST"\)/,
    );
  });

  it('refuses a missing file path before sending, naming the path', async () => {
    const sentBefore = engine.requests().length;
    const err = (await client.uploadMedia({ file: '/no/such/file.wav' }).catch((e: unknown) => e)) as MediaEnhanceError;
    assert.equal(err.code, 'VALIDATION');
    assert.match(err.message, /\/no\/such\/file\.wav/);
    assert.equal(engine.requests().length, sentBefore);
  });

  it('refuses an API key that no header can carry (CR/LF, spaces, controls, non-ASCII) at construction, naming the rule but never the key', () => {
    for (const [apiKey, kind] of [
      ['sekrit-123\r\nX-Injected: 1', /a line break/],
      ['sekrit-123\n', /a line break/],
      ['sekrit 123', /a space or tab/],
      ['sekrit\u0000123', /a control character/],
      ['sekrit-é23', /a character outside ASCII/],
    ] as const) {
      assert.throws(
        () => new MediaEnhanceClient({ baseUrl: engine.url, apiKey }),
        (err: MediaEnhanceError) => {
          assert.equal(err.code, 'VALIDATION');
          assert.match(err.message, /apiKey: must be printable ASCII characters without spaces or line breaks/);
          assert.match(err.message, kind);
          for (const text of [err.message, ...err.details, err.stack ?? ''])
            assert.ok(!text.includes('sekrit') && !text.includes('X-Injected'), text);
          return true;
        },
      );
    }
  });

  it('refuses media uids "." and ".." and "" before requesting (a URL path would resolve them away)', async () => {
    const sentBefore = engine.requests().length;
    for (const uid of ['.', '..', '']) {
      const calls = [
        () => client.getMetadata(uid),
        () => client.waitForCompletion(uid),
        () => client.downloadFile(uid),
        () => client.downloadToFile(uid, '/tmp/never-written.wav'),
        () => client.getLoudnessReport(uid),
      ];
      for (const call of calls)
        await assert.rejects(call(), (err: MediaEnhanceError) => {
          assert.equal(err.code, 'VALIDATION');
          assert.match(err.message, uid ? /path\.media_uid: must not be "\." or "\.\."/ : /between 1 and 200/);
          return true;
        });
    }
    assert.equal(engine.requests().length, sentBefore);
  });

  it('refuses credentials in a base URL of any scheme without echoing them', () => {
    for (const baseUrl of [
      'ftp://alice:p4ssw0rd@127.0.0.1/',
      'https://alice:p4ssw0rd@127.0.0.1/',
      'http://alice:p4ssw0rd@127.0.0.1:8080/x',
      'ftp//alice:p4ssw0rd@127.0.0.1/',
      'not a url alice:p4ssw0rd@host',
    ]) {
      assert.throws(
        () => new MediaEnhanceClient({ baseUrl, apiKey: 'k' }),
        (err: MediaEnhanceError) => {
          assert.equal(err.code, 'VALIDATION');
          for (const text of [err.message, ...err.details, err.stack ?? ''])
            assert.ok(!text.includes('p4ssw0rd') && !text.includes('alice'), text);
          assert.match(err.message, /baseUrl: (must not contain credentials|must be an absolute)/);
          return true;
        },
      );
    }
  });

  it('refuses a non-loopback http: base URL unless insecure http is allowed', () => {
    assert.throws(
      () => new MediaEnhanceClient({ baseUrl: 'http://media.example/', apiKey: 'k' }),
      (err: MediaEnhanceError) =>
        err.code === 'VALIDATION' && /baseUrl: plain http: is only allowed to a loopback host/.test(err.message),
    );
    assert.doesNotThrow(() =>
      new MediaEnhanceClient({ baseUrl: 'http://media.example/', apiKey: 'k', allowInsecureHttp: true }).close(),
    );
    assert.doesNotThrow(() => new MediaEnhanceClient({ baseUrl: 'http://[::1]:8080', apiKey: 'k' }).close());
    assert.doesNotThrow(() => new MediaEnhanceClient({ baseUrl: 'https://media.example/', apiKey: 'k' }).close());
  });
});
