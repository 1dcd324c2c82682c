// Many requests at once: the client shares a bounded pool of connections per origin, and an upload the
// service provably did not accept (refused for now, or cut off before its body was sent) is sent again.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { MediaEnhanceClient, MediaEnhanceError } from '../../src';
import { makeWav } from '../fixtures/media';
import { startTestEngine } from '../fixtures/test-engine';

const COPY_PROCESSOR = join(__dirname, '../../src/engine/processors/copy-processor.js');
/** No rate limit on either side: what is measured here is connections, not the window. */
const UNLIMITED = { uploadMedia: null, getMetadata: null } as const;

/** A TCP relay in front of `port` that counts the connections open through it at once. */
async function countingRelay(port: number): Promise<{ url: string; peak(): number; close(): void }> {
  let open = 0;
  let peak = 0;
  const sockets = new Set<Socket>();
  const relay: Server = createServer((client) => {
    open++;
    peak = Math.max(peak, open);
    const upstream = connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.once('close', () => open--);
  });
  relay.listen(0, '127.0.0.1');
  await once(relay, 'listening');
  return {
    url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    peak: () => peak,
    close: () => {
      for (const socket of sockets) socket.destroy();
      relay.close();
    },
  };
}

describe('client: connections under load', function () {
  this.timeout(90_000);
  const wav = makeWav(0.1, 8_000);

  it('30 uploads at once to an engine that serves 5 connections: all 30 accepted, none twice', async () => {
    const engine = await startTestEngine({
      server: { maxConnections: 5 },
      limits: UNLIMITED,
      processorModule: COPY_PROCESSOR,
    });
    const client = new MediaEnhanceClient({ baseUrl: engine.url, apiKey: engine.apiKey, limits: UNLIMITED });
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 30 }, (_, i) => client.uploadMedia({ file: wav, fileName: `m${i}.wav` })),
      );
      const failed = results.filter((r) => r.status === 'rejected').map((r) => String(r.reason));
      assert.deepEqual(failed, []);
      const accepted = engine.requests().filter((r) => r.method === 'POST' && r.status === 201);
      assert.equal(accepted.length, 30, 'each upload accepted once');
    } finally {
      await client.close();
      await engine.dispose();
    }
  });

  it('never opens more than maxConnections connections to the service, however many requests wait', async () => {
    const engine = await startTestEngine({ limits: UNLIMITED, processorModule: COPY_PROCESSOR });
    const relay = await countingRelay(engine.port);
    const client = new MediaEnhanceClient({
      baseUrl: relay.url,
      apiKey: engine.apiKey,
      maxConnections: 3,
      limits: UNLIMITED,
    });
    try {
      const uploaded = await Promise.all(Array.from({ length: 40 }, () => client.uploadMedia({ file: wav })));
      await Promise.all(uploaded.map((m) => client.getMetadata(m.uid)));
      assert.ok(relay.peak() <= 3, `${relay.peak()} connections at once`);
      assert.ok(relay.peak() >= 2, 'the requests did share the pool');
    } finally {
      await client.close();
      relay.close();
      await engine.dispose();
    }
  });

  it('refuses a maxConnections that is not a whole number from 1 to 1024, naming it', () => {
    for (const maxConnections of [0, -1, 2.5, 1025, Number.NaN])
      assert.throws(
        () => new MediaEnhanceClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', maxConnections }),
        (err: MediaEnhanceError) =>
          err.code === 'VALIDATION' && /maxConnections: must be a whole number from 1 to 1024/.test(err.message),
      );
  });

  describe('an upload whose connection breaks', () => {
    let service: HttpServer;
    let baseUrl: string;
    /** How the fake service treats each upload, in turn: cut it before or after its body, or accept it. */
    let plan: Array<'cut-early' | 'cut-after-body' | 'accept'>;
    let seen: number;

    beforeEach(async () => {
      seen = 0;
      service = createHttpServer((req, res) => {
        const step = plan[seen++] ?? 'accept';
        if (step === 'cut-early') {
          // The headers and a first part of the body arrived; the rest never will.
          req.once('data', () => req.socket.resetAndDestroy());
          return;
        }
        req.resume();
        req.once('end', () => {
          if (step === 'cut-after-body') req.socket.resetAndDestroy();
          else {
            res.writeHead(201, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ uid: `m${seen}`, enhancement_status: 'PENDING' }));
          }
        });
      });
      service.listen(0, '127.0.0.1');
      await once(service, 'listening');
      baseUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    });
    afterEach(() => {
      service.closeAllConnections();
      service.close();
    });

    // Large enough that the reset comes long before the body could have been read to its end.
    const big = makeWav(300, 48_000);

    it('is sent again when it was cut off before its body was sent: the service cannot have accepted it', async () => {
      plan = ['cut-early', 'cut-early', 'accept'];
      const client = new MediaEnhanceClient({ baseUrl, apiKey: 'k', retry: { baseDelayMs: 10 } });
      try {
        const waits: string[] = [];
        const media = await client.uploadMedia({ file: big }, { onWait: (e) => waits.push(e.cause ?? '') });
        assert.equal(media.uid, 'm3');
        assert.equal(seen, 3);
        assert.equal(waits.length, 2, waits.join());
      } finally {
        await client.close();
      }
    });

    it('is not sent again when the body was sent whole before the connection broke: the service may have it', async () => {
      plan = ['cut-after-body', 'accept'];
      const client = new MediaEnhanceClient({ baseUrl, apiKey: 'k', retry: { baseDelayMs: 10 } });
      try {
        await assert.rejects(client.uploadMedia({ file: makeWav(0.1, 8_000) }), (err: MediaEnhanceError) => {
          assert.equal(err.code, 'NETWORK');
          return true;
        });
        assert.equal(seen, 1);
      } finally {
        await client.close();
      }
    });
  });
});
