// Every kind of bad input reaches a Catch node with the original msg and an error that names the
// field, the value and the rule, and nothing is sent to the service. Failed media and timeouts too.
import assert from 'node:assert/strict';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { makeWav } from '../fixtures/media';
import { sidebarRegistry } from '../../src/sidebar/registry';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  nextInput,
  remoteConfig,
  statusTexts,
  stopHelper,
  sleep,
  TAB,
} from './flow-helper';

type Caught = { error: { message: string; code?: string; source: { id: string } }; [key: string]: unknown };

describe('nodes: bad input, failed media and timeouts reach Catch nodes', function () {
  this.timeout(60_000);
  let engine: TestEngine;

  before(async () => {
    await initHelper();
    engine = await startTestEngine({ processingDelayMs: 60_000 });
  });
  after(async () => {
    await stopHelper();
    await engine.dispose();
  });
  afterEach(() => helper.unload());

  function flowOf(nodes: object[]): object[] {
    return [
      TAB,
      // The engine as a remote service whose config node lists no extension: as a service that declares none.
      remoteConfig(engine.url, { extensions: 'listed' }),
      ...nodes.map((n) => ({ z: 'tab', service: 'svc', wires: [['out']], ...n })),
      { id: 'out', type: 'helper', z: 'tab' },
      ...catchAll(),
    ];
  }

  const cases: { node: Record<string, unknown>; msg: Record<string, unknown>; says: RegExp[] }[] = [
    {
      node: { type: 'media-enhance-upload' },
      msg: { payload: 'not a file' },
      says: [/msg\.payload/, /"not a file"/, /Buffer/],
    },
    {
      node: { type: 'media-enhance-upload' },
      msg: { filename: '/no/such/file.wav' },
      says: [/msg\.filename/, /\/no\/such\/file\.wav/, /no such file/],
    },
    {
      node: { type: 'media-enhance-upload' },
      msg: { payload: makeWav(0.1, 8000), enhancement: { loudness_target: -3 } },
      says: [/msg\.enhancement\.loudness_target/, /less than or equal to -5/, /got -3/],
    },
    {
      node: { type: 'media-enhance-upload' },
      msg: { payload: makeWav(0.1, 8000), enhancement: { loudness: -16 } },
      says: [/msg\.enhancement\.loudness\b/, /not a setting/, /permitted: loudness_target/],
    },
    {
      node: { type: 'media-enhance-upload' },
      msg: { payload: makeWav(0.1, 8000), enhancement: 'loud' },
      says: [/msg\.enhancement/, /"loud"/, /object/],
    },
    {
      node: { type: 'media-enhance-upload', loudnessTarget: '-80' },
      msg: { payload: makeWav(0.1, 8000) },
      says: [/setting "target loudness \(LUFS\)"/, /greater than or equal to -70/, /got -80/],
    },
    {
      // A remote service that does not declare the built-in engine's output-encoding extension.
      node: { type: 'media-enhance-upload', transcode: 'MP3' },
      msg: { payload: makeWav(0.1, 8000), enhancement: { bitrate_kbps: 128 } },
      says: [/msg\.enhancement\.bitrate_kbps/, /"output-encoding" extension, which this service does not declare/],
    },
    {
      node: { type: 'media-enhance-file', folder: '/tmp', transcode: 'MP3', downmixMono: true },
      msg: { payload: makeWav(0.1, 8000) },
      says: [/setting "mono downmix"/, /does not declare/, /got true/],
    },
    {
      node: { type: 'media-enhance-upload' },
      msg: { payload: makeWav(0.1, 8000), enhancement: { bitrate_kbps: 1000 } },
      says: [/msg\.enhancement\.bitrate_kbps/, /less than or equal to 320/, /got 1000/],
    },
    {
      node: { type: 'media-enhance-video' },
      msg: { payload: makeWav(0.1, 8000), enhancement: { transcode: 'MP3' } },
      says: [/msg\.enhancement\.transcode/, /not a setting/],
    },
    {
      node: {
        type: 'media-enhance-audio',
        loudnessTarget: '-16',
        peakLimit: '-1',
        enhancementLevel: '1',
        model: 'LARK_V2',
      },
      msg: { payload: 42 },
      says: [/msg\.payload/, /got 42/, /URL/],
    },
    {
      node: {
        type: 'media-enhance-audio',
        loudnessTarget: '-16',
        peakLimit: '-1',
        enhancementLevel: '1',
        model: 'LARK_V2',
      },
      msg: { payload: 'ftp://host/a.wav' },
      says: [/msg\.payload/, /scheme/, /ftp:/],
    },
    {
      node: {
        type: 'media-enhance-audio',
        loudnessTarget: '-16',
        peakLimit: '-1',
        enhancementLevel: '1',
        model: 'LARK_V2',
      },
      msg: { payload: 'http://127.0.0.1:9/a.wav', enhancement: { enhancement_level: 2 } },
      says: [/msg\.enhancement\.enhancement_level/, /less than or equal to 1/, /got 2/],
    },
    {
      node: { type: 'media-enhance-wait' },
      msg: { payload: { no: 'uid' } },
      says: [/msg\.media_uid/, /media uid is required/],
    },
    {
      node: { type: 'media-enhance-download', folder: '/tmp' },
      msg: { media_uid: 'abc', step: 'RAW' },
      says: [/msg\.step/, /"RAW"/, /ENHANCED, PRE/],
    },
    {
      node: { type: 'media-enhance-download', folder: '/tmp' },
      msg: { payload: 'abc' },
      says: [/msg\.media_uid/, /got nothing/],
    },
    {
      node: { type: 'media-enhance-download', output: 'file', folder: '' },
      msg: { media_uid: 'abc' },
      says: [/setting "folder"/, /required/],
    },
  ];

  for (const { node, msg, says } of cases) {
    it(`${String(node.type).replace('media-enhance-', '')}: ${JSON.stringify(msg, (k, v: unknown) => (k === 'payload' && (v as { type?: unknown } | null)?.type === 'Buffer' ? '<Buffer>' : v))} ${Object.keys(node).length > 1 ? `with ${JSON.stringify(node)}` : ''}`, async () => {
      await loadFlow(flowOf([{ id: 'under-test', ...node }]), { svc: { apiKey: engine.apiKey } });
      const before = engine.requests().length;
      const caught = nextInput(helper.getNode('caught'));
      const out = collect(helper.getNode('out'));
      helper.getNode('under-test').receive({ ...msg, topic: 'original' });
      const error = (await caught) as Caught;
      for (const pattern of says) assert.match(error.error.message, pattern);
      assert.equal(error.error.code, 'VALIDATION');
      assert.equal(error.error.source.id, 'under-test');
      assert.equal(error.topic, 'original', 'the original msg reaches the Catch node');
      await sleep(300);
      assert.equal(out.length, 0, 'nothing is sent on');
      assert.equal(engine.requests().length, before, 'nothing reached the service');
      // A bad node setting is not the message's fault: the status says which it is.
      const settingAtFault = says[0].source.startsWith('setting');
      assert.equal(
        statusTexts(helper.getNode('under-test')).at(-1),
        settingAtFault ? 'invalid settings' : 'invalid input',
      );
    });
  }

  it('a node whose settings are out of range says so at deploy, with a red status', async () => {
    await loadFlow(flowOf([{ id: 'under-test', type: 'media-enhance-upload', truePeak: '3' }]));
    const logged = helper
      .log()
      .getCalls()
      .map((call) => call.args[0] as { level: number; msg: string; id?: string })
      .filter((entry) => entry.id === 'under-test' && entry.level === 20);
    assert.equal(logged.length, 1);
    assert.match(
      String(logged[0].msg),
      /setting "peak limit \(dBTP\)": ensure this value is less than or equal to 0 \(got 3\)/,
    );
    assert.deepEqual(statusTexts(helper.getNode('under-test')), ['invalid settings']);
  });

  it('a node without a service node says which setting is missing', async () => {
    await loadFlow([
      TAB,
      { id: 'under-test', type: 'media-enhance-wait', z: 'tab', service: '', wires: [[]] },
      ...catchAll(),
    ]);
    const caught = nextInput(helper.getNode('caught'));
    helper.getNode('under-test').receive({ media_uid: 'abc' });
    assert.match(((await caught) as Caught).error.message, /setting "service": no media enhance service is selected/);
    await sleep(300);
    assert.equal(statusTexts(helper.getNode('under-test')).at(-1), 'no service');
  });

  it('a config node with a base URL that cannot work names that setting, and the node says "invalid settings"', async () => {
    await loadFlow(
      [
        TAB,
        remoteConfig('ftp://127.0.0.1/media'),
        { id: 'under-test', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [[]] },
        ...catchAll(),
      ],
      { svc: { apiKey: 'k' } },
    );
    const caught = nextInput(helper.getNode('caught'));
    helper.getNode('under-test').receive({ payload: makeWav(0.1, 8000) });
    const error = ((await caught) as Caught).error;
    assert.match(error.message, /setting "base URL": must use http: or https: \(got "ftp:\/\/127\.0\.0\.1\/media"\)$/);
    await sleep(300);
    assert.equal(statusTexts(helper.getNode('under-test')).at(-1), 'invalid settings');
  });

  it('a base URL with credentials (any scheme) is refused without the credentials in the error, the log or the sidebar', async () => {
    await loadFlow(
      [
        TAB,
        remoteConfig('ftp://user:p4ssw0rd@127.0.0.1/'),
        { id: 'under-test', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [[]] },
        ...catchAll(),
      ],
      { svc: { apiKey: 'k' } },
    );
    const caught = nextInput(helper.getNode('caught'));
    helper.getNode('under-test').receive({ payload: makeWav(0.1, 8000) });
    const error = ((await caught) as Caught).error;
    assert.match(error.message, /setting "base URL": must not contain credentials/);
    const logged = helper
      .getNode('svc')
      .error.getCalls()
      .map((call: { args: unknown[] }) => String(call.args[0]));
    assert.ok(logged.length > 0);
    const published = JSON.stringify(sidebarRegistry.snapshot());
    assert.match(published, /must not contain credentials/);
    for (const text of [error.message, ...logged, published]) assert.ok(!text.includes('p4ssw0rd'), text);
  });

  it('an API key with a line break fails at deploy as a setting error naming the rule, never the key, and sends nothing', async () => {
    const sentBefore = engine.requests().length;
    await loadFlow(
      [
        TAB,
        remoteConfig(engine.url),
        { id: 'under-test', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [[]] },
        ...catchAll(),
      ],
      { svc: { apiKey: `${engine.apiKey}\r\nX-Injected: 1` } },
    );
    const caught = nextInput(helper.getNode('caught'));
    helper.getNode('under-test').receive({ payload: makeWav(0.1, 8000) });
    const error = ((await caught) as Caught).error;
    assert.match(error.message, /setting "API key": must be printable ASCII characters without spaces or line breaks/);
    assert.equal(error.code, 'VALIDATION');
    const logged = helper
      .getNode('svc')
      .error.getCalls()
      .map((call: { args: unknown[] }) => String(call.args[0]));
    for (const text of [error.message, ...logged]) {
      assert.ok(!text.includes(engine.apiKey) && !text.includes('X-Injected'), text);
    }
    assert.equal(engine.requests().length, sentBefore);
  });

  it('a media that ends FAILED reaches Catch from the wait node with media_uid kept and code JOB_FAILED', async () => {
    const failing = await startTestEngine({ faults: { failProcessingRate: 1 } });
    try {
      await loadFlow(
        [
          TAB,
          remoteConfig(failing.url),
          { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['wait']] },
          { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', wires: [['out']] },
          { id: 'out', type: 'helper', z: 'tab' },
          ...catchAll(),
        ],
        { svc: { apiKey: failing.apiKey } },
      );
      const caught = nextInput(helper.getNode('caught'));
      helper.getNode('upload').receive({ payload: makeWav(0.2, 8000), topic: 'episode 3' });
      const error = (await caught) as Caught;
      assert.equal(error.error.code, 'JOB_FAILED');
      assert.equal(error.error.source.id, 'wait');
      assert.equal(typeof error.media_uid, 'string');
      assert.equal(error.topic, 'episode 3');
      // The reason leads; which media and how it ended follow.
      assert.match(
        error.error.message,
        /^processing failed \(an injected fault\) \(media \S+ ended FAILED \[PROCESSING_FAILED\]\)$/,
      );
      await sleep(300);
      assert.equal(statusTexts(helper.getNode('wait')).at(-1), 'enhancement failed');
    } finally {
      await failing.dispose();
    }
  });

  it("a file the service refuses reaches Catch with the service's reason first, then the request and status", async () => {
    await loadFlow(flowOf([{ id: 'under-test', type: 'media-enhance-upload' }]), { svc: { apiKey: engine.apiKey } });
    const caught = nextInput(helper.getNode('caught'));
    helper
      .getNode('under-test')
      .receive({ payload: Buffer.from('these are my notes, not audio'), filename: 'notes.wav' });
    const error = ((await caught) as Caught).error;
    assert.equal(error.code, 'UNSUPPORTED');
    assert.match(
      error.message,
      /^"notes\.wav" is not a recognised audio or video file .* \(POST \/v2\/medias: HTTP 415\)$/,
    );
    await sleep(300);
    assert.equal(statusTexts(helper.getNode('under-test')).at(-1), 'unsupported format');
  });

  it('a wait that outlasts its timeout reaches Catch with code TIMEOUT and media_uid kept', async () => {
    await loadFlow(
      flowOf([
        { id: 'upload', type: 'media-enhance-upload', wires: [['wait']] },
        { id: 'wait', type: 'media-enhance-wait', timeout: '1' },
      ]),
      { svc: { apiKey: engine.apiKey } },
    );
    const caught = nextInput(helper.getNode('caught'));
    helper.getNode('upload').receive({ payload: makeWav(0.2, 8000) });
    const error = (await caught) as Caught;
    assert.equal(error.error.code, 'TIMEOUT');
    assert.match(error.error.message, /1 ?s|1000 ?ms/);
    assert.equal(typeof error.media_uid, 'string');
  });
});
