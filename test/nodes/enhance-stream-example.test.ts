// The "Enhance a live stream" example as Node-RED runs it, core nodes and all: a copy of the speech sample
// read in 20 ms chunks in real time, through enhance stream, joined and written beside the original. The
// file written is as long as the original and lines up with it, sample for sample.
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exampleFlows, type FlowNode } from '../fixtures/example-flows';
import { SPEECH_SAMPLE } from '../enhance/speech-sample';
import { collect, helper, initHelper, placed, sleep, stopHelper, unloadFlow } from './flow-helper';

const ROOT = join(__dirname, '..', '..', '..');
const CORE = [
  'common/20-inject.js',
  'common/21-debug.js',
  'common/25-catch.js',
  'common/90-comment.js',
  'storage/10-file.js',
  'function/10-function.js',
  'sequence/17-split.js',
];
const MODULES: unknown[] = [
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by path, the way Node-RED loads them
  require(join(ROOT, 'nodes', 'media-enhance-stream.js')),
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's core nodes
  ...CORE.map((path) => require(`@node-red/nodes/core/${path}`) as unknown),
];

function pcmOf(wav: Buffer): Int16Array {
  const data = wav.indexOf('data');
  const bytes = wav.subarray(data + 8, data + 8 + wav.readUInt32LE(data + 4));
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

describe('example: enhance a live stream', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    await initHelper();
    dir = await mkdtemp(join(tmpdir(), 'me-stream-example-'));
  });
  afterEach(() => unloadFlow());
  after(async () => {
    await stopHelper();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the enhanced recording beside the original, as long as it and lined up with it', async () => {
    const original = join(dir, 'talk.wav');
    await copyFile(SPEECH_SAMPLE, original);
    const flow = exampleFlows(join(ROOT, 'examples')).filter(
      (node) => node.id.startsWith('me-ex6-') || node.id === 'me-example-tab-enhance-a-live-stream',
    );
    assert.ok(flow.length > 5, 'the example is there');
    const inject = flow.find((node) => node.type === 'inject')!;
    inject.props = [{ p: 'filename', v: original, vt: 'str' }];
    // A helper node beside the debug node hears what was written, and the Catch node's errors.
    const written = flow.find((node) => node.id === 'me-ex6-write')!;
    (written.wires as string[][])[0].push('heard');
    const caught = flow.find((node) => node.type === 'catch')!;
    (caught.wires as string[][])[0].push('errors');
    const helpers: FlowNode[] = [
      { id: 'heard', type: 'helper', z: written.z },
      { id: 'errors', type: 'helper', z: written.z },
    ];
    await helper.load(MODULES, placed([...flow, ...helpers]));
    const heard = collect(helper.getNode('heard'));
    const errors = collect(helper.getNode('errors'));
    const started = Date.now();
    helper.getNode(inject.id).receive({});
    while (heard.length === 0 && Date.now() - started < 40_000) await sleep(100);
    assert.deepEqual(errors, []);
    assert.equal(heard.length, 1, 'one file written');
    const path = join(dir, 'talk_stream-enhanced.wav');
    assert.equal(heard[0].filename, path);
    // 10.6 s of audio sent in real time takes about that long.
    assert.ok(Date.now() - started > 8000, 'the chunks went in real time');
    const input = pcmOf(await readFile(original));
    const output = pcmOf(await readFile(path));
    assert.equal(output.length, input.length, 'as long as the original');
    // Lined up: the enhanced speech correlates best with the original at no lag.
    const correlation = (lag: number) => {
      let sum = 0;
      for (let i = 0; i < input.length; i++) sum += input[i] * (output[i + lag] ?? 0);
      return sum;
    };
    const lags = Array.from({ length: 801 }, (_, i) => i - 400);
    const best = lags.reduce((a, b) => (correlation(b) > correlation(a) ? b : a));
    assert.equal(best, 0);
    assert.ok((await stat(original)).size > 0, 'the original is left as it was');
  });
});
