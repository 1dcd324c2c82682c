// The player's route on a real express app (as Node-RED's admin app, adminAuth off), a real client and
// engine on loopback: each file is fetched from the service once for the player, and fetched anew after
// the results are cleared or a built-in engine removed its media (no stale copy is played); a ticket
// opens only the file it was issued for, and only while it lives.
import assert from 'node:assert/strict';
import { request } from 'undici';
import { MediaEnhanceClient } from '../../src/client/client';
import { PlayTickets, TICKET_IDLE_MS } from '../../src/sidebar/play-tickets';
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

describe("sidebar: the player's tickets on its route", function () {
  this.timeout(60_000);
  let engine: TestEngine;
  let client: MediaEnhanceClient;
  let routes: ServedAdminRoutes;
  let now: number;
  let uids: string[];

  before(async () => {
    engine = await startTestEngine();
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
    uids = [];
    for (const name of ['one.wav', 'two.wav']) {
      const { uid } = await client.uploadMedia({ file: makeWav(0.5, 16_000), fileName: name });
      await client.waitForCompletion(uid);
      uids.push(uid);
    }
    now = Date.now();
    routes = await serveAdminRoutes(client, engine.url, uids, new PlayTickets(() => now));
  });

  after(async () => {
    await routes?.close();
    await client?.close();
    await engine?.dispose();
  });

  async function issue(uid: string, body: unknown): Promise<{ status: number; ticket?: string; error?: string }> {
    const res = await request(`${routes.base}/media-enhance/media/${encodeURIComponent(uid)}/tickets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.statusCode, ...((await res.body.json()) as { ticket?: string; error?: string }) };
  }

  async function play(uid: string, step: string, ticket: string): Promise<{ status: number; text: string }> {
    const res = await request(
      `${routes.base}/media-enhance/media/${encodeURIComponent(uid)}/play?step=${step}&ticket=${encodeURIComponent(ticket)}`,
      { headers: { range: 'bytes=0-11' } },
    );
    const body = Buffer.from(await res.body.arrayBuffer());
    return { status: res.statusCode, text: body.toString('latin1') };
  }

  it('plays the one file its ticket names, and refuses another media, another file and an expired ticket', async () => {
    const [one, two] = uids;
    const { status, ticket } = await issue(one, { step: 'ENHANCED' });
    assert.equal(status, 200);
    const played = await play(one, 'ENHANCED', ticket!);
    assert.equal(played.status, 206);
    assert.equal(played.text.slice(8, 12), 'WAVE');
    for (const [uid, step] of [
      [two, 'ENHANCED'],
      [one, 'PRE'],
    ]) {
      const refused = await play(uid, step, ticket!);
      assert.equal(refused.status, 403, `${uid} ${step}`);
      assert.match(refused.text, /ticket: not a live ticket for this file/);
    }
    // A ticket for the other media opens that one.
    assert.equal((await play(two, 'PRE', (await issue(two, { step: 'PRE' })).ticket!)).status, 206);

    now += TICKET_IDLE_MS + 1;
    assert.equal((await play(one, 'ENHANCED', ticket!)).status, 403, 'expired');
  });

  it('issues a ticket only for a media this instance handled and a step of the interface', async () => {
    assert.equal((await issue('3f1c9a2e-0000-4000-8000-000000000000', { step: 'PRE' })).status, 404);
    const badStep = await issue(uids[0], { step: 'RAW' });
    assert.equal(badStep.status, 400);
    assert.equal(badStep.error, 'step "RAW": must be ENHANCED or PRE, or left out for ENHANCED');
    assert.equal((await issue(uids[0], {})).status, 200, 'ENHANCED when no step is named');
  });
});
