// The player's route on a real express app (as Node-RED's admin app, adminAuth off), a real client and
// engine on loopback: each file is fetched from the service once for the player, and fetched anew after
// the results are cleared or a built-in engine removed its media (no stale copy is played).
import assert from 'node:assert/strict';
import { request } from 'undici';
import { MediaEnhanceClient } from '../../src/client/client';
import { SidebarRegistry } from '../../src/sidebar/registry';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { serveAdminRoutes, type ServedAdminRoutes } from './admin-routes-fixture';

describe("sidebar: the player's copies of the files", function () {
  this.timeout(60_000);
  let engine: TestEngine;
  let client: MediaEnhanceClient;
  let routes: ServedAdminRoutes;
  let base: string;
  let uid: string;
  let registry: SidebarRegistry;

  beforeEach(async () => {
    engine = await startTestEngine();
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
    uid = (await client.uploadMedia({ file: makeWav(0.5, 16_000), fileName: 'take.wav' })).uid;
    await client.waitForCompletion(uid);
    routes = await serveAdminRoutes(client, engine.url, uid);
    registry = routes.registry;
    base = routes.base;
  });

  afterEach(async () => {
    await routes.close();
    await client.close();
    await engine.dispose();
  });

  /** The service's answers for the media's files (not its status). */
  const fetchedFromService = () =>
    engine.requests().filter((entry) => entry.path.includes(uid) && !entry.path.includes('/metadata')).length;

  async function play(): Promise<number> {
    const res = await request(`${base}/media-enhance/media/${encodeURIComponent(uid)}/play?step=ENHANCED`);
    await res.body.arrayBuffer();
    return res.statusCode;
  }

  it('plays a kept copy, and fetches the file anew once the media is removed or the results cleared', async () => {
    assert.equal(await play(), 200);
    const once = fetchedFromService();
    assert.ok(once >= 1);
    assert.equal(await play(), 200);
    assert.equal(fetchedFromService(), once, 'played again from the kept copy');

    registry.mediaRemoved(uid); // a built-in engine removed it (retention, or the editor's removal)
    assert.equal(await play(), 200);
    const twice = fetchedFromService();
    assert.ok(twice > once, 'fetched anew after the removal');

    const cleared = await request(`${base}/media-enhance/results/clear`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    await cleared.body.arrayBuffer();
    assert.equal(cleared.statusCode, 204);
    assert.equal(await play(), 404, 'a cleared result is no longer one this instance shows');
  });
});
