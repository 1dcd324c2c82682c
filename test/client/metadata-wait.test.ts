// Waiting metadata (docs/interface.md#waiting-metadata): a service that offers it answers a held status
// request when the media's state changes, so a completion reaches the caller at once; a service that does
// not offer it is polled as the interface says, and never sent `wait`.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { MediaEnhanceClient } from '../../src';
import { METADATA_WAIT_HEADER } from '../../src/contract/metadata-wait';
import { makeWav } from '../fixtures/media';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AddressInfo } from 'node:net';

const COPY_PROCESSOR = join(__dirname, '../../src/engine/processors/copy-processor.js');
const PROCESSING_MS = 2_000;

/** The status requests for one media, with when each arrived and ended (ms since the epoch). */
function polls(engine: TestEngine, uid: string) {
  return engine
    .requests()
    .filter((entry) => entry.path.startsWith(`/v2/medias/${uid}/metadata`))
    .map((entry) => ({
      path: entry.path,
      waitS: Number(/[?&]wait=(\d+)/.exec(entry.path)?.[1] ?? NaN),
      at: entry.at,
      end: entry.at + entry.ms,
    }));
}

describe('waiting metadata (local-engine extension)', function () {
  this.timeout(30_000);
  let engine: TestEngine | undefined;
  let client: MediaEnhanceClient | undefined;

  afterEach(async () => {
    await client?.close();
    await engine?.dispose();
    client = engine = undefined;
  });

  it('answers a held status request on the change of state, and the wait resolves within 1 s of the completion', async () => {
    engine = await startTestEngine({
      metadataWaitS: 30,
      processingDelayMs: PROCESSING_MS,
      processorModule: COPY_PROCESSOR,
    });
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
    const media = await client.uploadMedia({ file: makeWav(0.3, 16_000), fileName: 'clip.wav' });
    const done = await client.waitForCompletion(media.uid);
    const resolvedAt = Date.now();
    const completedAt = Date.parse(String(done.updated_at));
    assert.ok(resolvedAt - completedAt < 1_000, `resolved ${resolvedAt - completedAt} ms after the completion`);

    const seen = polls(engine, media.uid);
    const held = seen.filter((poll) => Number.isFinite(poll.waitS));
    assert.ok(held.length >= 1, `no held request: ${JSON.stringify(seen)}`);
    // The request that brought the completion: sent before it, answered right after it, long before its own wait ran out.
    const last = held.at(-1)!;
    assert.ok(last.at < completedAt, `the last held request came after the completion: ${JSON.stringify(last)}`);
    assert.ok(last.end - completedAt < 250, `answered ${last.end - completedAt} ms after the change`);
    assert.ok(
      last.end - last.at < last.waitS * 1000 - 500,
      `held ${last.end - last.at} ms of its ${last.waitS} s: ended by its timer, not by the change`,
    );
    // As many requests as polling would make, not more: one per change of state at most, plus the first look.
    assert.ok(seen.length <= 4, `${seen.length} status requests for one short media: ${JSON.stringify(seen)}`);
  });

  it('a service without the extension is polled as the interface says: no wait, first look at once, then 3-5 s apart', async () => {
    engine = await startTestEngine({ processingDelayMs: 7_000, processorModule: COPY_PROCESSOR });
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
    const media = await client.uploadMedia({ file: makeWav(0.3, 16_000), fileName: 'clip.wav' });
    await client.waitForCompletion(media.uid);
    const seen = polls(engine, media.uid);
    assert.ok(seen.length >= 2, `polled ${seen.length} times`);
    for (const poll of seen)
      assert.equal(poll.path, `/v2/medias/${media.uid}/metadata`, 'a wait sent to a service that offers none');
    for (let i = 1; i < seen.length; i++) {
      const gap = seen[i].at - seen[i - 1].at;
      assert.ok(gap >= 2_950 && gap <= 5_100, `poll ${i} came ${gap} ms after the one before (3-5 s)`);
    }
  });

  it('says the longest wait on every status answer, and refuses a wait outside it naming the field, the value and the rule', async () => {
    engine = await startTestEngine({ metadataWaitS: 20, processingDelayMs: 60_000, processorModule: COPY_PROCESSOR });
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
    const media = await client.uploadMedia({ file: makeWav(0.3, 16_000), fileName: 'clip.wav' });
    const url = `${engine.url}/v2/medias/${media.uid}/metadata`;
    const headers = { 'x-api-key': engine.apiKey };
    const plain = await fetch(url, { headers });
    assert.equal(plain.headers.get(METADATA_WAIT_HEADER), '20');
    for (const bad of ['0', '21', '1.5', 'soon']) {
      const res = await fetch(`${url}?wait=${bad}`, { headers });
      assert.equal(res.status, 422, `wait=${bad}`);
      const body = (await res.json()) as { detail: Array<{ loc: string[]; msg: string; input: unknown }> };
      assert.deepEqual(body.detail[0].loc, ['query', 'wait']);
      assert.equal(body.detail[0].input, bad);
      assert.match(body.detail[0].msg, /whole number of seconds from 1 to 20/);
    }
    // Held for its wait when nothing changes, then answered as it stands: from PROCESSING (60 s of delay
    // ahead), since a busy machine may not have started the media yet, and that change would answer it.
    for (;;) {
      const answer = (await (await fetch(url, { headers })).json()) as { enhancement_status: string };
      if (answer.enhancement_status === 'PROCESSING') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const started = Date.now();
    const held = await fetch(`${url}?wait=1`, { headers });
    assert.equal(held.status, 200);
    assert.ok(Date.now() - started >= 900, `answered after ${Date.now() - started} ms`);
    assert.equal(((await held.json()) as { enhancement_status: string }).enhancement_status, 'PROCESSING');
  });

  it('answers a held request when its wait ends, though garbage is collected while it is held', async () => {
    engine = await startTestEngine({ metadataWaitS: 20, processingDelayMs: 60_000, processorModule: COPY_PROCESSOR });
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
    const media = await client.uploadMedia({ file: makeWav(0.3, 16_000), fileName: 'clip.wav' });
    const url = `${engine.url}/v2/medias/${media.uid}/metadata`;
    const headers = { 'x-api-key': engine.apiKey };
    // Held from PROCESSING (60 s of delay ahead), so only the end of its wait answers it.
    while (
      ((await (await fetch(url, { headers })).json()) as { enhancement_status: string }).enhancement_status !==
      'PROCESSING'
    )
      await new Promise((resolve) => setTimeout(resolve, 20));
    // Collected often, as a long-running Node-RED does in time: a wait's timer must not be collected with it.
    setFlagsFromString('--expose-gc');
    const collectGarbage = runInNewContext('gc') as () => void;
    const collecting = setInterval(collectGarbage, 20);
    try {
      const started = Date.now();
      const held = await fetch(`${url}?wait=1`, { headers });
      assert.equal(held.status, 200);
      const ms = Date.now() - started;
      assert.ok(ms >= 900 && ms < 5_000, `answered after ${ms} ms, its wait being 1 s`);
    } finally {
      clearInterval(collecting);
    }
  });

  it('an engine without the extension ignores wait and declares none', async () => {
    engine = await startTestEngine({ processingDelayMs: 60_000, processorModule: COPY_PROCESSOR });
    client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey });
    const media = await client.uploadMedia({ file: makeWav(0.3, 16_000), fileName: 'clip.wav' });
    const started = Date.now();
    const res = await fetch(`${engine.url}/v2/medias/${media.uid}/metadata?wait=5`, {
      headers: { 'x-api-key': engine.apiKey },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get(METADATA_WAIT_HEADER), null);
    assert.ok(Date.now() - started < 2_000, 'held by an engine that offers no wait');
  });

  it('a service that offers waits but refuses them is sent one wait, then plain polls apart, the refusal kept', async () => {
    // Says it holds answers on every status answer, yet refuses every held request (422).
    const seen: string[] = [];
    const service: Server = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.setHeader(METADATA_WAIT_HEADER, '20');
      res.setHeader('content-type', 'application/json');
      if (req.url?.includes('wait=')) {
        res.statusCode = 422;
        res.end(JSON.stringify({ detail: [{ loc: ['query', 'wait'], msg: 'refused', type: 'value_error' }] }));
      } else res.end(JSON.stringify({ uid: 'refuser', enhancement_status: 'PROCESSING' }));
    });
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    try {
      const { port } = service.address() as AddressInfo;
      client = new MediaEnhanceClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k' });
      // Shorter than the interface's first pause (3 s): the first look, one wait refused, one plain poll at once.
      await assert.rejects(client.waitForCompletion('refuser', { timeoutMs: 2_500 }), { code: 'TIMEOUT' });
      assert.equal(seen.filter((url) => url.includes('wait=')).length, 1, seen.join(' '));
      assert.equal(seen.length, 3, seen.join(' '));
    } finally {
      service.closeAllConnections();
      service.close();
    }
  });
});
