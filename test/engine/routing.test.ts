// Which operation a request reaches, by method and path: the router reads the contract's paths, so a
// path one character off is nobody's operation. Without a key, a request the router matched is refused
// 401; one it did not match gets 404, or 405 for a known path with the wrong method.
import assert from 'node:assert/strict';
import { PATHS } from '../../src/contract/endpoints';
import { ENGINE_EXTENSIONS, EXTENSIONS_PATH } from '../../src/contract/extensions';
import { call, startTestEngine, type TestEngine } from './helpers';

describe('engine: routing', () => {
  let engine: TestEngine;

  before(async () => {
    engine = await startTestEngine();
  });

  after(async () => {
    await engine.dispose();
  });

  const statusOf = async (method: string, path: string) => (await call(`${engine.url}${path}`, { method })).status;

  it('reaches each operation at its contract path, with its method', async () => {
    for (const path of [PATHS.enhanceAudio, PATHS.enhanceVideo, PATHS.uploadMedia])
      assert.equal(await statusOf('POST', path), 401, `POST ${path}`);
    for (const path of [PATHS.metadata('a-uid'), PATHS.file('a-uid')]) {
      assert.equal(await statusOf('GET', path), 401, `GET ${path}`);
      assert.equal(await statusOf('HEAD', path), 401, `HEAD ${path}`);
    }
  });

  it('answers 405 to a known path with another method', async () => {
    for (const path of [PATHS.enhanceAudio, PATHS.enhanceVideo, PATHS.uploadMedia])
      assert.equal(await statusOf('GET', path), 405, `GET ${path}`);
    for (const path of [PATHS.metadata('a-uid'), PATHS.file('a-uid')])
      assert.equal(await statusOf('POST', path), 405, `POST ${path}`);
  });

  it('answers 404 to paths that are no operation: no uid, a uid of two segments, another last segment', async () => {
    for (const path of [
      '/',
      '/v2/medias/',
      '/v2/mediasx',
      '/v2/medias/metadata',
      '/v2/medias//metadata',
      '/v2/medias/a/b/metadata',
      '/v2/medias/a-uid/other',
      '/v2/medias/a-uid/file/',
      '/v1/videos/',
    ])
      assert.equal(await statusOf('GET', path), 404, `GET ${path}`);
  });

  it('decodes the uid segment: an encoded slash is part of the uid, not a second segment', async () => {
    const { status, text } = await call(`${engine.url}${PATHS.metadata('a/b')}`, {
      headers: { 'x-api-key': engine.apiKey },
    });
    assert.equal(status, 404);
    assert.match(text, /no media with uid \\"a\/b\\"/, 'answered as a metadata request for the uid a/b');
  });

  it('declares its extensions at GET /v2/extensions, to anyone, counting against no limit', async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await call(`${engine.url}${EXTENSIONS_PATH}`);
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.json, { extensions: [...ENGINE_EXTENSIONS] });
      assert.equal(answer.headers['x-ratelimit-limit'], undefined, 'no rate limit');
    }
    assert.equal(await statusOf('POST', EXTENSIONS_PATH), 404, 'GET and HEAD only');
  });
});
