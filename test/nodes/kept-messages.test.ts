// Messages kept across redeploys: a full deploy during twenty waits still delivers twenty messages, each
// once with its own properties; a download cut by a deploy continues where it stopped; a damaged
// journal costs only its damaged entries; a deleted node's messages are dropped with a log line; the
// setting turned off keeps nothing.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { probe } from '../fixtures/ffmpeg';
import { makeWav } from '../fixtures/media';
import type { EnhancementSettings } from '../../src/contract/fields';
import {
  catchAll,
  collect,
  helper,
  initHelper,
  loadFlow,
  placed,
  remoteConfig,
  sleep,
  stopHelper,
  TAB,
  unloadFlow,
} from './flow-helper';

describe('nodes: messages kept across redeploys', function () {
  this.timeout(90_000);
  let engine: TestEngine;
  let userDir: string;
  /** ffmpeg, slowed by 3 s whenever it reads an intro, so a deploy can cut a join midway. */
  let slowFfmpegFolder: string;
  const credentials = () => ({ svc: { apiKey: engine.apiKey } });
  const waitsOf = (nodeId: string) => join(userDir, 'media-enhance', 'svc', 'kept', nodeId);

  before(async () => {
    slowFfmpegFolder = await fsp.mkdtemp(join(tmpdir(), 'me-slow-ffmpeg-'));
    const slowFfmpeg = join(slowFfmpegFolder, 'ffmpeg');
    await fsp.writeFile(slowFfmpeg, '#!/bin/sh\ncase "$*" in *intro*) sleep 3 ;; esac\nexec ffmpeg "$@"\n', {
      mode: 0o755,
    });
    userDir = await initHelper({ ffmpegPath: slowFfmpeg });
    engine = await startTestEngine({
      processingDelayMs: 2_500,
      limits: { uploadMedia: null, getMetadata: null },
    });
  });
  after(async () => {
    await stopHelper();
    await engine.dispose();
    await fsp.rm(slowFfmpegFolder, { recursive: true, force: true });
  });
  afterEach(unloadFlow);

  function flow(extra: Record<string, unknown> = {}): object[] {
    return [
      TAB,
      remoteConfig(engine.url),
      { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', wires: [['completed']], ...extra },
      { id: 'completed', type: 'helper', z: 'tab' },
      ...catchAll(),
    ];
  }

  /** A flow of one enhance file node (`props` on top of its service) sending to `done`. */
  function enhanceFileFlow(url: string, props: Record<string, unknown>): object[] {
    return [
      TAB,
      remoteConfig(url),
      { id: 'file', type: 'media-enhance-file', z: 'tab', service: 'svc', wires: [['done']], ...props },
      { id: 'done', type: 'helper', z: 'tab' },
      ...catchAll(),
    ];
  }

  /** Deploys `flows` whole and returns the one message the helper `to` then receives: none caught, no second within 1.5 s. */
  async function sentOnceAfterFullDeploy(
    flows: object[],
    creds: Record<string, unknown>,
    ms = 30_000,
    to = 'done',
  ): Promise<Record<string, unknown>> {
    await helper.setFlows(placed(flows), 'full', creds);
    const done = collect(helper.getNode(to));
    const caught = collect(helper.getNode('caught'));
    await until(() => done.length + caught.length >= 1, 'the message is delivered', ms);
    await sleep(1_500); // a second message would arrive meanwhile
    assert.equal(caught.length, 0, JSON.stringify(caught[0]?.error));
    assert.equal(done.length, 1, 'the message is sent once');
    return done[0];
  }

  async function upload(count: number): Promise<string[]> {
    const { MediaEnhanceClient } = await import('../../src/client');
    const client = new MediaEnhanceClient({
      baseUrl: engine.url,
      apiKey: engine.apiKey,
      limits: { uploadMedia: null },
    });
    try {
      return await Promise.all(
        Array.from({ length: count }, async () => (await client.uploadMedia({ file: makeWav(0.2, 8000) })).uid),
      );
    } finally {
      await client.close();
    }
  }

  async function until(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await sleep(100);
    }
  }

  const entries = async (nodeId: string) =>
    (await fsp.readdir(waitsOf(nodeId)).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));

  /** A file's size, 0 while it is not there. */
  const sizeOf = (path: string) =>
    fsp.stat(path).then(
      (st) => st.size,
      () => 0,
    );

  /**
   * A download in progress on an engine that drips its answers (so a deploy can cut it): `uid` is a
   * 4 s upload of `original` (384 kB), `folder` the download folder; both go after the test. With
   * `enhancement`, the upload asks for it and the test starts once the media is COMPLETED.
   */
  async function withSlowDownload(
    bytesPerSecond: number,
    test: (slow: TestEngine, uid: string, original: Buffer, folder: string) => Promise<void>,
    enhancement?: EnhancementSettings,
  ): Promise<void> {
    const slow = await startTestEngine({
      faults: { dripRate: 1, dripBytesPerSecond: bytesPerSecond },
      limits: { downloadFile: null, getMetadata: null },
    });
    const { MediaEnhanceClient } = await import('../../src/client');
    const client = new MediaEnhanceClient({
      baseUrl: slow.url,
      apiKey: slow.apiKey,
      extensions: 'ask',
      limits: { getMetadata: null },
    });
    const folder = await fsp.mkdtemp(join(tmpdir(), 'me-download-'));
    const original = makeWav(4, 48_000);
    try {
      const uid = (
        await client.uploadMedia({
          file: original,
          fileName: 'talk.wav',
          ...(enhancement ? { media_enhancement: enhancement } : {}),
        })
      ).uid;
      if (enhancement) await client.waitForCompletion(uid, { timeoutMs: 60_000 });
      await test(slow, uid, original, folder);
    } finally {
      await helper.unload();
      await client.close();
      await slow.dispose();
      await fsp.rm(folder, { recursive: true, force: true });
    }
  }

  it('a full deploy during twenty waits: twenty messages after it, each once, with its properties', async () => {
    await loadFlow(flow(), credentials());
    const uids = await upload(20);
    uids.forEach((uid, i) =>
      helper
        .getNode('wait')
        .receive({ media_uid: uid, index: i, tags: { episode: i }, payload: Buffer.from(`audio ${i}`) }),
    );
    await until(async () => (await entries('wait')).length === 20, 'the twenty waits are kept');

    await helper.setFlows(placed(flow()), 'full', credentials());
    const completed = collect(helper.getNode('completed'));
    const caught = collect(helper.getNode('caught'));
    await until(() => completed.length >= 20, 'twenty messages arrive');
    await sleep(1_500); // a duplicate would arrive meanwhile
    assert.equal(caught.length, 0, JSON.stringify(caught[0]?.error));
    assert.deepEqual(
      completed.map((m) => m.index).sort((a, b) => Number(a) - Number(b)),
      uids.map((_, i) => i),
      'each message once',
    );
    for (const msg of completed) {
      const i = msg.index as number;
      assert.equal(msg.media_uid, uids[i]);
      assert.deepEqual(msg.tags, { episode: i });
      assert.equal((msg.payload as { enhancement_status: string }).enhancement_status, 'COMPLETED');
      assert.deepEqual(
        msg.media_resumed,
        { dropped: [`payload (${`audio ${i}`.length} bytes of binary data)`] },
        'the Buffer payload is named as dropped',
      );
    }
    assert.deepEqual(await entries('wait'), [], 'every kept wait ended with its message');
  });

  it('a download to a file cut by a full deploy continues from its part with a Range request, and arrives once', async () => {
    // 128 kB/s: about 3 s for the whole file.
    await withSlowDownload(128 * 1024, async (slow, uid, original, folder) => {
      const downloadFlow = () => [
        TAB,
        remoteConfig(slow.url),
        {
          id: 'download',
          type: 'media-enhance-download',
          z: 'tab',
          service: 'svc',
          step: 'PRE',
          output: 'file',
          folder,
          wires: [['saved']],
        },
        { id: 'saved', type: 'helper', z: 'tab' },
        ...catchAll(),
      ];
      await loadFlow(downloadFlow(), { svc: { apiKey: slow.apiKey } });
      helper.getNode('download').receive({ media_uid: uid, topic: 'talk' });
      const part = join(folder, `.${uid}.PRE.part`);
      await until(async () => (await sizeOf(part)) > 50_000, 'part of the file is on disk');

      await helper.setFlows(placed(downloadFlow()), 'full', { svc: { apiKey: slow.apiKey } });
      const saved = collect(helper.getNode('saved'));
      const caught = collect(helper.getNode('caught'));
      await until(() => saved.length === 1, 'the download is delivered');
      await sleep(1_000);
      assert.equal(caught.length, 0, JSON.stringify(caught[0]?.error));
      assert.equal(saved.length, 1);
      assert.equal(saved[0].topic, 'talk');
      const written = await fsp.readFile(String(saved[0].filename));
      assert.equal(
        createHash('sha256').update(written).digest('hex'),
        createHash('sha256').update(original).digest('hex'),
        'the joined file is the upload, byte for byte',
      );
      const fileRequests = slow.requests().filter((r) => r.path.includes('/file'));
      assert.deepEqual(
        fileRequests.map((r) => r.status),
        [200, 206],
        'the second request asked only for the rest',
      );
      assert.deepEqual(await fsp.readdir(folder), ['talk.wav'], 'no part is left');
    });
  });

  it('a download of several files cut by a full deploy after its first file: each file once, no numbered copy, one message with every file', async () => {
    // 256 kB/s: about 1.5 s for each 384 kB file.
    const masterToo: EnhancementSettings = {
      enhancement_model: 'LOUDNESS_ONLY',
      outputs: [{ name: 'master', transcode: 'WAV' }],
    };
    await withSlowDownload(
      256 * 1024,
      async (slow, uid, _original, folder) => {
        const downloadFlow = () => [
          TAB,
          remoteConfig(slow.url),
          {
            id: 'download',
            type: 'media-enhance-download',
            z: 'tab',
            service: 'svc',
            files: 'all',
            output: 'file',
            folder,
            wires: [['saved']],
          },
          { id: 'saved', type: 'helper', z: 'tab' },
          ...catchAll(),
        ];
        await loadFlow(downloadFlow(), { svc: { apiKey: slow.apiKey } });
        helper.getNode('download').receive({ media_uid: uid, topic: 'talk' });
        // The enhanced file written whole, the master under way.
        const part = join(folder, `.${uid}.master.part`);
        await until(
          async () => (await sizeOf(part)) > 50_000,
          'the master is under way, the first file written',
          30_000,
        );
        const before = (await fsp.readdir(folder)).filter((name) => !name.startsWith('.'));
        assert.equal(before.length, 1, `one file written before the deploy: ${before.join(', ')}`);

        await helper.setFlows(placed(downloadFlow()), 'full', { svc: { apiKey: slow.apiKey } });
        const saved = collect(helper.getNode('saved'));
        const caught = collect(helper.getNode('caught'));
        await until(() => saved.length >= 1, 'the message is delivered');
        await sleep(1_500); // a second message would arrive meanwhile
        assert.equal(caught.length, 0, JSON.stringify(caught[0]?.error));
        assert.equal(saved.length, 1, 'the message is sent once');
        assert.equal(saved[0].topic, 'talk');
        const files = saved[0].files as { name: string; path: string }[];
        assert.deepEqual(
          files.map((file) => file.name),
          ['enhanced', 'master'],
          'every file in the message',
        );
        assert.equal(files[0].path, join(folder, before[0]), 'the file written before the deploy, as it was named');
        const after = (await fsp.readdir(folder)).sort();
        assert.deepEqual(
          after,
          files.map((file) => file.path.slice(folder.length + 1)).sort(),
          'each file once, no part',
        );
        assert.ok(!after.some((name) => /\(\d+\)/.test(name)), `no numbered copy: ${after.join(', ')}`);
        const fileRequests = slow.requests().filter((r) => r.path.includes('/file'));
        // The access log writes a named step as "…": the master's requests are those that are not ENHANCED's.
        assert.deepEqual(
          fileRequests.map((r) => [r.path.endsWith('step=ENHANCED'), r.status]),
          [
            [true, 200],
            [false, 200],
            [false, 206],
          ],
          `the enhanced file fetched once, the master continued from its part: ${JSON.stringify(fileRequests)}`,
        );
      },
      masterToo,
    );
  });

  it('enhance file with several files and "if the file exists: error", cut by a full deploy after its first file: the resumed message delivers every file once', async () => {
    const slow = await startTestEngine({
      faults: { dripRate: 1, dripBytesPerSecond: 256 * 1024 },
      limits: { downloadFile: null, getMetadata: null, uploadMedia: null },
    });
    const inbox = await fsp.mkdtemp(join(tmpdir(), 'me-several-in-'));
    const folder = await fsp.mkdtemp(join(tmpdir(), 'me-several-out-'));
    try {
      const input = join(inbox, 'take.wav');
      await fsp.writeFile(input, makeWav(4, 48_000));
      const fileFlow = () =>
        enhanceFileFlow(slow.url, {
          model: 'LOUDNESS_ONLY',
          output: 'file',
          folder,
          fileName: 'episode.wav',
          ifExists: 'error',
          furtherOutputs: [{ name: 'master', transcode: 'WAV' }],
        });
      await loadFlow(fileFlow(), { svc: { apiKey: slow.apiKey } });
      helper.getNode('file').receive({ filename: input, topic: 'take' });
      const masterPart = async () =>
        (await fsp.readdir(folder)).find((name) => name.startsWith('.') && name.endsWith('.master.part'));
      await until(
        async () => {
          const part = await masterPart();
          return part !== undefined && (await fsp.stat(join(folder, part))).size > 50_000;
        },
        'the master is under way, the first file written',
        60_000,
      );
      assert.ok((await fsp.readdir(folder)).includes('episode.wav'), 'the enhanced file is written before the deploy');

      const sent = await sentOnceAfterFullDeploy(fileFlow(), { svc: { apiKey: slow.apiKey } });
      assert.equal(sent.topic, 'take');
      const files = sent.files as { name: string; path: string }[];
      assert.deepEqual(
        files.map((file) => [file.name, file.path]),
        [
          ['enhanced', join(folder, 'episode.wav')],
          ['master', join(folder, 'take_master.wav')],
        ],
      );
      assert.deepEqual((await fsp.readdir(folder)).sort(), ['episode.wav', 'take_master.wav'], 'each file once');
    } finally {
      await helper.unload();
      await slow.dispose();
      await fsp.rm(inbox, { recursive: true, force: true });
      await fsp.rm(folder, { recursive: true, force: true });
    }
  });

  it('enhance file cut by a full deploy while it joins an intro: the resumed message joins the file it downloaded, no second copy', async () => {
    const inbox = await fsp.mkdtemp(join(tmpdir(), 'me-join-in-'));
    const folder = await fsp.mkdtemp(join(tmpdir(), 'me-join-out-'));
    try {
      const input = join(inbox, 'take.wav');
      const intro = join(inbox, 'intro.wav');
      await fsp.writeFile(input, makeWav(2, 48_000));
      await fsp.writeFile(intro, makeWav(1, 48_000));
      const fileFlow = () =>
        enhanceFileFlow(engine.url, { model: 'LOUDNESS_ONLY', output: 'file', folder, fileName: 'episode.wav', intro });
      const enhancedFetches = () =>
        engine.requests().filter((r) => r.path.includes('/file') && r.path.endsWith('step=ENHANCED')).length;
      const fetchedBefore = enhancedFetches();
      await loadFlow(fileFlow(), credentials());
      helper.getNode('file').receive({ filename: input, topic: 'take' });
      const joining = async () => (await fsp.readdir(folder)).some((name) => name.startsWith('.episode.wav.episode-'));
      await until(joining, 'the intro is being joined onto the downloaded episode', 60_000);
      assert.ok((await fsp.readdir(folder)).includes('episode.wav'), 'the episode is downloaded before the deploy');

      const sent = await sentOnceAfterFullDeploy(fileFlow(), credentials(), 60_000);
      assert.equal(sent.topic, 'take');
      assert.equal(sent.filename, join(folder, 'episode.wav'));
      assert.deepEqual(await fsp.readdir(folder), ['episode.wav'], 'one file, no numbered copy, no work left');
      assert.equal(enhancedFetches() - fetchedBefore, 1, 'the enhanced file is fetched once');
      // Joined once: 1 s of intro and 2 s of episode, without a crossfade.
      const episode = sent.episode as { duration_s: number; episode_start_s: number };
      assert.ok(Math.abs(episode.episode_start_s - 1) < 0.01, `episode starts at ${episode.episode_start_s} s`);
      const probed = await probe(join(folder, 'episode.wav'));
      assert.ok(Math.abs(Number(probed.format.duration) - 3) < 0.01, `${probed.format.duration} s, not 3`);
      assert.deepEqual(await entries('file'), [], 'the kept message ended with its delivery');
    } finally {
      await helper.unload();
      await fsp.rm(inbox, { recursive: true, force: true });
      await fsp.rm(folder, { recursive: true, force: true });
    }
  });

  it('a download node deleted mid-download: its message is dropped and its part file removed with it', async () => {
    await withSlowDownload(64 * 1024, async (slow, uid, _original, folder) => {
      await loadFlow(
        [
          TAB,
          remoteConfig(slow.url),
          {
            id: 'download',
            type: 'media-enhance-download',
            z: 'tab',
            service: 'svc',
            step: 'PRE',
            output: 'file',
            folder,
            wires: [[]],
          },
        ],
        { svc: { apiKey: slow.apiKey } },
      );
      helper.getNode('download').receive({ media_uid: uid });
      const part = join(folder, `.${uid}.PRE.part`);
      await until(async () => (await sizeOf(part)) > 20_000, 'part of the file is on disk');

      await helper.setFlows(placed([TAB, remoteConfig(slow.url)]), 'full', { svc: { apiKey: slow.apiKey } });
      await until(async () => (await fsp.readdir(folder)).length === 0, 'the part is removed');
      assert.deepEqual(await entries('download'), []);
    });
  });

  it('enhance file cut by a full deploy after its upload goes on waiting and downloading, without a second upload', async () => {
    const folder = await fsp.mkdtemp(join(tmpdir(), 'me-enhance-file-'));
    const fileFlow = () => [
      TAB,
      remoteConfig(engine.url),
      {
        id: 'file',
        type: 'media-enhance-file',
        z: 'tab',
        service: 'svc',
        loudnessTarget: '-16',
        truePeak: '-1',
        output: 'file',
        folder,
        fileName: '',
        wires: [['done']],
      },
      { id: 'done', type: 'helper', z: 'tab' },
      ...catchAll(),
    ];
    try {
      await loadFlow(fileFlow(), credentials());
      const uploadsBefore = engine.requests().filter((r) => r.method === 'POST').length;
      helper.getNode('file').receive({ payload: makeWav(0.5, 16_000), filename: 'memo.wav', topic: 'memo' });
      await until(async () => (await entries('file')).length === 1, 'the uploaded message is kept');

      await helper.setFlows(placed(fileFlow()), 'full', credentials());
      const done = collect(helper.getNode('done'));
      const caught = collect(helper.getNode('caught'));
      await until(() => done.length === 1, 'the enhanced file arrives');
      await sleep(1_000);
      assert.equal(caught.length, 0, JSON.stringify(caught[0]?.error));
      assert.equal(done.length, 1);
      assert.equal(done[0].topic, 'memo');
      assert.deepEqual(done[0].media_resumed, {
        dropped: [`payload (${makeWav(0.5, 16_000).length} bytes of binary data)`],
      });
      assert.equal(engine.requests().filter((r) => r.method === 'POST').length - uploadsBefore, 1, 'uploaded once');
      assert.deepEqual(await fsp.readdir(folder), ['memo_enhanced.wav']);
      assert.deepEqual(await entries('file'), []);
    } finally {
      await fsp.rm(folder, { recursive: true, force: true });
    }
  });

  it('uploads queued by the rate limit when a full deploy comes are made after it, each once', async () => {
    const limited = await startTestEngine({ windowMs: 3_000, limits: { uploadMedia: 2 } });
    const folder = await fsp.mkdtemp(join(tmpdir(), 'me-queued-'));
    const uploadFlow = () => [
      TAB,
      remoteConfig(limited.url),
      { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['uploaded']] },
      { id: 'uploaded', type: 'helper', z: 'tab' },
      ...catchAll(),
    ];
    try {
      await loadFlow(uploadFlow(), { svc: { apiKey: limited.apiKey } });
      const first = collect(helper.getNode('uploaded'));
      for (let i = 0; i < 4; i++) {
        const filename = join(folder, `take-${i}.wav`);
        await fsp.writeFile(filename, makeWav(0.2, 8000));
        helper.getNode('upload').receive({ filename, topic: `take ${i}` });
        if (i === 0) await until(() => first.length === 1, 'the first upload teaches the client the limit');
      }
      await until(
        async () => (await entries('upload')).length === 2 && first.length === 2,
        'two uploads answered, two queued',
      );
      const accepted = () => limited.requests().filter((r) => r.method === 'POST' && r.status === 201).length;
      assert.equal(accepted(), 2);

      await helper.setFlows(placed(uploadFlow()), 'full', { svc: { apiKey: limited.apiKey } });
      const after = collect(helper.getNode('uploaded'));
      const caught = collect(helper.getNode('caught'));
      await until(() => after.length === 2, 'the queued uploads are made after the deploy');
      await sleep(1_000);
      assert.equal(caught.length, 0, JSON.stringify(caught[0]?.error));
      assert.deepEqual([...first, ...after].map((m) => m.topic).sort(), ['take 0', 'take 1', 'take 2', 'take 3']);
      assert.equal(accepted(), 4, 'each queued file accepted once (a new client may first meet a 429)');
      assert.deepEqual(await entries('upload'), []);
    } finally {
      await helper.unload();
      await limited.dispose();
      await fsp.rm(folder, { recursive: true, force: true });
    }
  });

  it('a message that reaches upload after a full deploy began stopping it is kept and uploaded after the deploy, once', async () => {
    const folder = await fsp.mkdtemp(join(tmpdir(), 'me-late-'));
    const uploadFlow = () => [
      TAB,
      remoteConfig(engine.url),
      { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['uploaded']] },
      { id: 'uploaded', type: 'helper', z: 'tab' },
      ...catchAll(),
    ];
    try {
      await loadFlow(uploadFlow(), credentials());
      const filename = join(folder, 'take-052.wav');
      await fsp.writeFile(filename, makeWav(0.2, 8000));
      // Node-RED delivers a message a turn after it routes it: one sent just before the deploy (a claim
      // node's) reaches the upload node once its close has begun.
      const upload = helper.getNode('upload');
      upload.on('close', () => upload.receive({ filename, topic: 'late' }));
      const before = engine.requests().filter((r) => r.method === 'POST').length;
      const after = await sentOnceAfterFullDeploy(uploadFlow(), credentials(), 30_000, 'uploaded');
      assert.equal(after.topic, 'late');
      assert.equal(engine.requests().filter((r) => r.method === 'POST').length, before + 1, 'uploaded once');
      assert.deepEqual(await entries('upload'), []);
    } finally {
      await helper.unload();
      await fsp.rm(folder, { recursive: true, force: true });
    }
  });

  it('a stop warns of the messages it ends that are not kept (a Buffer waiting to be uploaded)', async () => {
    const limited = await startTestEngine({ windowMs: 60_000, limits: { uploadMedia: 1 } });
    try {
      await loadFlow(
        [
          TAB,
          remoteConfig(limited.url),
          { id: 'upload', type: 'media-enhance-upload', z: 'tab', service: 'svc', wires: [['uploaded']] },
          { id: 'uploaded', type: 'helper', z: 'tab' },
        ],
        { svc: { apiKey: limited.apiKey } },
      );
      const uploaded = collect(helper.getNode('uploaded'));
      helper.getNode('upload').receive({ payload: makeWav(0.2, 8000), filename: 'a.wav' });
      await until(() => uploaded.length === 1, 'the first upload');
      helper.getNode('upload').receive({ payload: makeWav(0.2, 8000), filename: 'b.wav' });
      await sleep(300);
      const upload = helper.getNode('upload');
      // A deploy without the node stops it (unloading the helper would first remove its spies).
      await helper.setFlows(placed([TAB]), 'full');
      const warnings = upload.warn
        .getCalls()
        .filter((call) => call.thisValue === upload)
        .map((call) => String(call.args[0]));
      assert.ok(
        warnings.some((w) => /stopped with 1 message\(s\) in progress that are not kept/.test(w)),
        warnings.join('\n'),
      );
    } finally {
      await limited.dispose();
    }
  });

  it('a damaged journal: the node says which entries it could not read and resumes the rest', async () => {
    await loadFlow(flow(), credentials());
    const [uid] = await upload(1);
    helper.getNode('wait').receive({ media_uid: uid, topic: 'kept' });
    await until(async () => (await entries('wait')).length === 1, 'the wait is kept');
    await helper.unload();
    await fsp.writeFile(join(waitsOf('wait'), '1-cut-off.json'), '{"mediaUid":"abc","startedAt":17');
    await fsp.writeFile(join(waitsOf('wait'), '2-not-a-wait.json'), '{"hello":"world"}');

    await loadFlow(flow(), credentials());
    const completed = collect(helper.getNode('completed'));
    await until(() => completed.length === 1, 'the readable wait completes');
    assert.equal(completed[0].topic, 'kept');
    const warnings = helper
      .getNode('wait')
      .warn.getCalls()
      .map((call) => String(call.args[0]));
    assert.ok(
      warnings.some((w) => w.includes('1-cut-off.json') && /JSON/.test(w)),
      warnings.join('\n'),
    );
    assert.ok(
      warnings.some((w) => w.includes('2-not-a-wait.json') && w.includes('not a kept message')),
      warnings.join('\n'),
    );
  });

  it('a kept wait that fails when resumed (its node now has a bad setting) goes to Catch once and is not kept again', async () => {
    await loadFlow(flow(), credentials());
    const [uid] = await upload(1);
    helper.getNode('wait').receive({ media_uid: uid, topic: 'kept' });
    await until(async () => (await entries('wait')).length === 1, 'the wait is kept');

    await helper.setFlows(placed(flow({ timeout: 'soon' })), 'full', credentials());
    const caught = collect(helper.getNode('caught'));
    await until(() => caught.length === 1, 'the resumed message fails');
    assert.match(String((caught[0].error as { message: string }).message), /timeout/);
    assert.deepEqual(await entries('wait'), [], 'its entry ended with the failure');
    await helper.setFlows(placed(flow()), 'full', credentials());
    const again = collect(helper.getNode('completed'));
    await sleep(3_500);
    assert.equal(again.length, 0, 'nothing comes back after the next deploy');
  });

  it('a wait node deleted from the flow: its waits are dropped, each media named in the log', async () => {
    await loadFlow(flow(), credentials());
    const uids = await upload(2);
    for (const uid of uids) helper.getNode('wait').receive({ media_uid: uid });
    await until(async () => (await entries('wait')).length === 2, 'the waits are kept');
    const log = helper.log();
    log.resetHistory();

    await helper.setFlows(
      placed([TAB, remoteConfig(engine.url), { id: 'completed', type: 'helper', z: 'tab' }]),
      'full',
      credentials(),
    );
    await until(
      async () =>
        (await fsp.stat(waitsOf('wait')).then(
          () => true,
          () => false,
        )) === false,
      'the journal is removed',
    );
    const lines = log.getCalls().map((call) => JSON.stringify(call.args[0]));
    for (const uid of uids)
      assert.ok(
        lines.some((l) => l.includes(uid) && l.includes('deleted from the flows')),
        `no log line names ${uid}:\n${lines.join('\n')}`,
      );
  });

  it('with "keep waiting across restarts" off, nothing is kept and a redeploy ends the wait', async () => {
    await loadFlow(flow({ keepAcrossRestarts: false }), credentials());
    const [uid] = await upload(1);
    helper.getNode('wait').receive({ media_uid: uid });
    await sleep(500);
    assert.deepEqual(await entries('wait'), []);
    await helper.setFlows(placed(flow({ keepAcrossRestarts: false })), 'full', credentials());
    const completed = collect(helper.getNode('completed'));
    await sleep(4_000);
    assert.equal(completed.length, 0);
  });
});
