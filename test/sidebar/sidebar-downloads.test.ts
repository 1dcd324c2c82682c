// The editor's downloads against the flows' (issue: 80 parallel sidebar downloads held a flow's download
// for 40 s, waiting in the same line). The admin routes on a real express app (as Node-RED's admin app,
// adminAuth off), a real client, a real engine on loopback: the editor's downloads take a small share and
// never wait in the flows' line; the checks are on the limiter's line and places, not on time.
import assert from 'node:assert/strict';
import { request } from 'undici';
import { MediaEnhanceClient } from '../../src/client/client';
import type { WaitEvent } from '../../src/client/transport';
import { SidebarDownloadShare } from '../../src/sidebar/download-share';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { serveAdminRoutes, type ServedAdminRoutes } from './admin-routes-fixture';

/** The downloads the engine (and so the client) allows per window: the editor's share is a tenth, 1. */
const LIMIT = 10;

describe('sidebar downloads beside the flows', function () {
  this.timeout(60_000);
  let engine: TestEngine;
  let client: MediaEnhanceClient;
  let routes: ServedAdminRoutes;
  let base: string;
  let uid: string;

  beforeEach(async () => {
    engine = await startTestEngine({ limits: { downloadFile: LIMIT } });
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey, limits: { downloadFile: LIMIT } });
    uid = (await client.uploadMedia({ file: makeWav(0.5, 16_000), fileName: 'take.wav' })).uid;
    await client.waitForCompletion(uid);
    routes = await serveAdminRoutes(client, engine.url, uid);
    base = routes.base;
  });

  afterEach(async () => {
    await routes.close();
    await client.close();
    await engine.dispose();
  });

  async function sidebarDownload(): Promise<{ status: number; retryAfter: string | undefined; bytes: number }> {
    const res = await request(`${base}/media-enhance/media/${encodeURIComponent(uid)}/file`);
    const body = Buffer.from(await res.body.arrayBuffer());
    return { status: res.statusCode, retryAfter: res.headers['retry-after'] as string | undefined, bytes: body.length };
  }

  it('80 parallel editor downloads take at most their share; the flows keep the rest of the window and never queue behind them', async () => {
    const answers = await Promise.all(Array.from({ length: 80 }, () => sidebarDownload()));
    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    assert.equal(served.length, SidebarDownloadShare.perWindow(LIMIT), 'the editor used its share of the window');
    assert.ok(served.every((a) => a.bytes > 0));
    for (const answer of refused) {
      assert.equal(answer.status, 429);
      assert.ok(Number(answer.retryAfter) >= 1, `Retry-After ${answer.retryAfter}`);
    }
    assert.equal(client.rateLimit('downloadFile').queued, 0, 'no editor download waits in the line');
    // Every other place of the window is the flows': each of their downloads goes at once.
    const waits: WaitEvent[] = [];
    for (let i = 0; i < LIMIT - served.length; i++) {
      const file = await client.downloadFile(uid, { onWait: (event) => waits.push(event) });
      file.stream.resume();
    }
    assert.deepEqual(waits, [], 'no flow download waited');
  });

  it('an editor download never goes ahead of a flow waiting for a place', async () => {
    for (let i = 0; i < LIMIT; i++) (await client.downloadFile(uid)).stream.resume();
    const cancel = new AbortController();
    const positions: number[] = [];
    const waiting = client.downloadFile(uid, {
      signal: cancel.signal,
      onWait: (event) => {
        if (event.reason === 'queued') positions.push(event.position!);
      },
    });
    waiting.catch(() => undefined);
    assert.equal(client.rateLimit('downloadFile').queued, 1, 'the flow waits');
    const answers = await Promise.all(Array.from({ length: 20 }, () => sidebarDownload()));
    for (const answer of answers) {
      assert.equal(answer.status, 429);
      assert.ok(Number(answer.retryAfter) >= 1);
    }
    assert.equal(client.rateLimit('downloadFile').queued, 1, 'still only the flow in line');
    assert.ok(positions.length > 0 && positions.every((p) => p === 1), `the flow stayed first: ${positions.join()}`);
    cancel.abort();
    await assert.rejects(waiting);
  });
});
