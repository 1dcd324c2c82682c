// The "Hear your microphone cleaned" example's websocket side as Node-RED runs it, core nodes and all,
// with websocket clients that speak as the live page does (src/live-page/wire-format.ts): each tab is a
// stream of its own whose answers come back to it only, in order; a refused chunk is answered with why;
// a closed tab ends its stream. (The page itself, in Chromium: test/editor/live-microphone.test.ts.)
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { WebSocket, type MessageEvent } from 'undici';
import { openStreams } from '../../src/stream/open-streams';
import { CHUNK_SAMPLES, decodeAnswer, decodeRefusal, encodeChunk, type Answer } from '../../src/live-page/wire-format';
import { exampleFlows } from '../fixtures/example-flows';
import { readSpeechSample, rms } from '../enhance/speech-sample';
import { helper, initHelper, placed, sleep, stopHelper, unloadFlow } from './flow-helper';

const ROOT = join(__dirname, '..', '..', '..');
const CORE = [
  'common/21-debug.js',
  'common/25-catch.js',
  'common/25-status.js',
  'common/90-comment.js',
  'function/10-function.js',
  'network/21-httpin.js',
  'network/22-websocket.js',
  'storage/10-file.js',
];
const MODULES: unknown[] = [
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by path, the way Node-RED loads them
  require(join(ROOT, 'nodes', 'media-enhance-stream.js')),
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's core nodes
  ...CORE.map((path) => require(`@node-red/nodes/core/${path}`) as unknown),
];
const STREAM_NODE = 'me-ex8-stream';

/** A browser tab, as far as the flow can tell: a websocket that sends chunks and collects what comes back. */
class Tab {
  readonly answers: Answer[] = [];
  readonly refusals: Array<{ seq?: number; error: string }> = [];
  private constructor(private readonly socket: WebSocket) {
    socket.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
      if (typeof event.data === 'string') this.refusals.push(decodeRefusal(event.data)!);
      else this.answers.push(decodeAnswer(event.data)!);
    };
  }

  static async open(url: string): Promise<Tab> {
    const socket = new WebSocket(url);
    socket.binaryType = 'arraybuffer';
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error(`no websocket at ${url}`));
    });
    return new Tab(socket);
  }

  send(data: ArrayBuffer | string): void {
    this.socket.send(data);
  }

  async close(): Promise<void> {
    const closed = new Promise((resolve) => (this.socket.onclose = resolve));
    this.socket.close();
    await closed;
  }
}

async function until(done: () => boolean, what: () => string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    assert.ok(Date.now() < deadline, `not within ${ms} ms: ${what()}`);
    await sleep(20);
  }
}

const streamsOpen = () => openStreams().filter((stream) => stream.nodeId === STREAM_NODE).length;

describe('example: hear your microphone cleaned (the flow behind the page)', function () {
  this.timeout(60_000);
  let url: string;
  before(async () => {
    await initHelper();
    const flow = exampleFlows(join(ROOT, 'examples')).filter(
      (node) => node.id.startsWith('me-ex8-') || node.id === 'me-example-tab-hear-your-microphone-cleaned',
    );
    assert.ok(flow.length > 10, 'the example is there');
    // The websocket listener is a config node: it stays without x and y, as the editor saves it.
    const listener = flow.filter((node) => node.type === 'websocket-listener');
    await helper.load(MODULES, [...placed(flow.filter((node) => !listener.includes(node))), ...listener]);
    const path = listener[0].path as string;
    url = `${helper.url().replace(/^http/, 'ws')}${path}`;
  });
  after(async () => {
    await unloadFlow();
    await stopHelper();
  });

  it('answers each tab in its own stream, to it only and in order; a refused chunk with why; a closed tab ends its stream', async () => {
    const { samples: speech } = await readSpeechSample();
    const speaking = await Tab.open(url);
    const quiet = await Tab.open(url);
    // 25 chunks each, sent at once (a quarter of a second: within the node's backlog of a second).
    for (let k = 0; k < 25; k++) {
      speaking.send(encodeChunk(k, speech.subarray((k + 50) * CHUNK_SAMPLES, (k + 51) * CHUNK_SAMPLES)));
      quiet.send(encodeChunk(100 + k, new Float32Array(CHUNK_SAMPLES)));
    }
    await until(
      () => speaking.answers.length === 25 && quiet.answers.length === 25,
      () => `${speaking.answers.length} and ${quiet.answers.length} answers of 25`,
    );
    assert.equal(streamsOpen(), 2, 'a stream for each tab');
    assert.deepEqual(
      speaking.answers.map((a) => a.seq),
      Array.from({ length: 25 }, (_, k) => k),
    );
    assert.deepEqual(
      quiet.answers.map((a) => a.seq),
      Array.from({ length: 25 }, (_, k) => 100 + k),
    );
    for (const answer of [...speaking.answers, ...quiet.answers]) {
      assert.equal(answer.samples.length, CHUNK_SAMPLES, 'as long as the chunk');
      assert.equal(answer.latencyMs, 24, "FINCH's latency at 16 kHz");
    }
    // The speech came back to its own tab, cleaned; the quiet tab got none of it.
    const level = (tab: Tab) => rms(Float32Array.from(tab.answers.slice(5).flatMap((a) => [...a.samples])));
    assert.ok(level(speaking) > 0.003, `the speaking tab hears speech (${level(speaking).toFixed(4)} RMS)`);
    assert.ok(level(quiet) < 1e-4, `the quiet tab hears silence (${level(quiet).toFixed(6)} RMS)`);

    // Not whole 16-bit samples: enhance stream refuses it, and the tab is told why, with the chunk's number.
    speaking.send(encodeChunk(25, new Float32Array(CHUNK_SAMPLES)).slice(0, 7));
    // Not a chunk at all.
    speaking.send('hello');
    await until(
      () => speaking.refusals.length === 2,
      () => `${speaking.refusals.length} refusals of 2`,
    );
    const [notWhole, text] = speaking.refusals.sort((a, b) => (a.seq === undefined ? 1 : b.seq === undefined ? -1 : 0));
    assert.equal(notWhole.seq, 25);
    assert.match(notWhole.error, /msg\.payload/);
    assert.match(notWhole.error, /whole/i);
    assert.equal(text.seq, undefined);
    assert.match(text.error, /binary message of a 4-byte sequence number and 16-bit PCM; this one is text/);
    assert.equal(quiet.refusals.length, 0, 'the other tab is told nothing');

    await speaking.close();
    await until(
      () => streamsOpen() === 1,
      () => `${streamsOpen()} streams open after the first tab closed`,
    );
    // The other tab's stream goes on.
    quiet.send(encodeChunk(125, new Float32Array(CHUNK_SAMPLES)));
    await until(
      () => quiet.answers.length === 26,
      () => `${quiet.answers.length} answers of 26`,
    );
    await quiet.close();
    await until(
      () => streamsOpen() === 0,
      () => `${streamsOpen()} streams open after both tabs closed`,
    );
  });
});
