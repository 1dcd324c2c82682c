// ffmpeg opens a user's file as what its first bytes said and nothing else, and never runs unbounded:
// an MP3 whose ID3 tag hides an HLS playlist must not make the engine read a file of its own, a run
// that makes no progress is killed, and no ffmpeg outlives the engine.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeWav } from '../fixtures/media';
import { AUDIO_BODY, call, KEY, metadata, settled, startTestEngine, upload, type TestEngine } from './helpers';

/** 10 bytes of an empty ID3v2 tag: the engine's sniffer (and ffmpeg's prober) take what follows for MP3. */
const ID3_TAG = Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1');

/** An "MP3" that is an HLS playlist naming `target`; without an end it is a live playlist, refreshed every `targetS`. */
function playlistInDisguise(target: string, { ended = true, targetS = 10 } = {}): Buffer {
  const lines = [
    '#EXTM3U',
    `#EXT-X-TARGETDURATION:${targetS}`,
    '#EXTINF:3,',
    target,
    ...(ended ? ['#EXT-X-ENDLIST'] : []),
  ];
  return Buffer.concat([ID3_TAG, Buffer.from(`${lines.join('\n')}\n`)]);
}

/** Whether `pid` still runs (a killed child not yet reaped is a zombie: it runs no more). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('engine: ffmpeg opens only what the file is, within a time bound', function () {
  this.timeout(60_000);
  let dir: string;
  let secret: string;
  let engine: TestEngine | undefined;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'me-confinement-'));
    // A user's recording elsewhere on the machine: 3 s of a 440 Hz tone as M4A.
    secret = join(dir, 'private-recording.m4a');
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=f=440:d=3', '-c:a', 'aac', secret]);
  });
  afterEach(async () => {
    await engine?.dispose();
    engine = undefined;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('an upload whose ID3 tag hides a playlist of a local file fails DECODE_FAILED, with nothing to download', async () => {
    engine = await startTestEngine();
    const res = await upload(engine, playlistInDisguise(secret), 'episode.mp3');
    assert.equal(res.status, 201, res.text);
    const done = await settled(engine, res.json.uid, 30_000);
    assert.equal(done.enhancement_status, 'FAILED');
    assert.equal(done.error?.code, 'DECODE_FAILED');
    const file = await call(`${engine.url}/v2/medias/${res.json.uid}/file?step=ENHANCED`, {
      headers: { 'x-api-key': KEY },
    });
    assert.notEqual(file.status, 200, 'no enhanced file: the local recording never came back');
  });

  it('a live playlist (no end, a day between refreshes) fails at once instead of holding the only worker', async () => {
    engine = await startTestEngine({ workers: 1 });
    const hostile = await upload(engine, playlistInDisguise(secret, { ended: false, targetS: 86_400 }), 'live.mp3');
    const normal = await upload(engine, makeWav(0.5, 48_000), 'talk.wav');
    const [first, second] = [
      await settled(engine, hostile.json.uid, 30_000),
      await settled(engine, normal.json.uid, 30_000),
    ];
    assert.equal(first.enhancement_status, 'FAILED');
    assert.equal(first.error?.code, 'DECODE_FAILED');
    assert.equal(second.enhancement_status, 'COMPLETED', 'the file queued behind it is done');
  });

  it('enhance-json fetching such a file fails the same way', async () => {
    const server = createServer((_req, res) => res.end(playlistInDisguise(secret)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      engine = await startTestEngine();
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/episode.mp3`;
      const res = await call(`${engine.url}/v1/media/enhance-json`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ ...AUDIO_BODY, file_name: 'episode.mp3', file_download_url: url }),
      });
      assert.equal(res.status, 201, res.text);
      const done = await settled(engine, res.json.generated_name, 30_000);
      assert.equal(done.enhancement_status, 'FAILED');
      assert.equal(done.error?.code, 'DECODE_FAILED');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  describe('with an ffmpeg that never ends and ignores SIGTERM', () => {
    let tools: string;
    const pidsFile = () => join(tools, 'pids');
    const pids = () =>
      existsSync(pidsFile()) ? readFileSync(pidsFile(), 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];

    before(() => {
      tools = mkdtempSync(join(tmpdir(), 'me-stuck-ffmpeg-'));
      // Answers -version like ffmpeg; any other run records its pid and waits a day, deaf to SIGTERM.
      const script = `#!/bin/sh\n[ "$2" = "-version" ] && exit 0\necho $$ >> "${pidsFile()}"\ntrap '' TERM\nexec sleep 86400\n`;
      for (const name of ['ffmpeg', 'ffprobe']) writeFileSync(join(tools, name), script, { mode: 0o755 });
    });
    after(() => {
      for (const pid of pids()) if (running(pid)) process.kill(pid, 'SIGKILL');
      rmSync(tools, { recursive: true, force: true });
    });

    it('a run with no progress is killed at the bound: the media fails saying so, the next one runs', async () => {
      writeFileSync(pidsFile(), '');
      engine = await startTestEngine({ workers: 1, ffmpegPath: join(tools, 'ffmpeg'), ffmpegStallMs: 1_000 });
      const stuck = await upload(engine, Buffer.concat([ID3_TAG, Buffer.alloc(2048, 0x41)]), 'stuck.mp3');
      const normal = await upload(engine, makeWav(0.5, 48_000), 'talk.wav');
      const done = await settled(engine, stuck.json.uid, 30_000);
      assert.equal(done.enhancement_status, 'FAILED');
      assert.equal(done.error?.code, 'DECODE_FAILED');
      assert.match(done.error.message, /made no progress for 1 s and was stopped/);
      assert.equal((await settled(engine, normal.json.uid, 30_000)).enhancement_status, 'COMPLETED');
      assert.ok(pids().length > 0, 'the stuck program ran');
      await until(() => pids().every((pid) => !running(pid)), 'the stuck program to end');
    });

    it('closing the engine kills the ffmpeg it was waiting for', async () => {
      writeFileSync(pidsFile(), '');
      engine = await startTestEngine({ workers: 1, ffmpegPath: join(tools, 'ffmpeg'), ffmpegStallMs: 600_000 });
      const stuck = await upload(engine, Buffer.concat([ID3_TAG, Buffer.alloc(2048, 0x41)]), 'stuck.mp3');
      await until(() => pids().length > 0, 'ffmpeg to start');
      // The run asks whether it still holds its job before it writes PROCESSING, so ffmpeg may start first.
      const processing = async () => (await metadata(engine!, stuck.json.uid)).json.enhancement_status === 'PROCESSING';
      await until(processing, 'the media to be PROCESSING');
      await engine.dispose();
      engine = undefined;
      await until(() => pids().every((pid) => !running(pid)), 'ffmpeg to be killed with the engine', 5_000);
    });
  });
});
