// A cluster where one instance has no ffmpeg: it leaves media that need ffmpeg to the instances that
// have it (none fails FFMPEG_REQUIRED for its lack), and its /healthz says it has none.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ffmpeg } from '../fixtures/ffmpeg';
import { makeWav } from '../fixtures/media';
import { startTestRedis, type TestRedis } from '../fixtures/redis-server';
import { startTestEngine, type TestEngine } from '../fixtures/test-engine';
import { followToEnd, tempFolder, uploadWav } from './engine-cluster';

describe('cluster: an instance without ffmpeg', function () {
  this.timeout(120_000);
  let redis: TestRedis;
  let data: ReturnType<typeof tempFolder>;
  let able: TestEngine;
  let unable: TestEngine;
  let mp3: Buffer;

  before(async () => {
    redis = await startTestRedis();
    data = tempFolder('cluster-no-ffmpeg-');
    const wav = join(data.path, 'tone.wav');
    writeFileSync(wav, makeWav(1, 16_000));
    await ffmpeg(['-i', wav, '-c:a', 'libmp3lame', '-b:a', '64k', join(data.path, 'tone.mp3')]);
    mp3 = readFileSync(join(data.path, 'tone.mp3'));
    const shared = { redis: redis.url, apiKeys: ['cluster-test-key'], workers: 1 };
    const dataDir = join(data.path, 'data');
    unable = await startTestEngine({ ...shared, ffmpegPath: join(data.path, 'no-such-ffmpeg') }, dataDir);
    able = await startTestEngine(shared, dataDir);
  });

  after(async () => {
    await unable?.close();
    await able?.close();
    await redis?.stop();
    data?.remove();
  });

  it('leaves MP3s to the instance with ffmpeg: every one completes', async () => {
    const uploads = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) => uploadWav(i % 2 ? able.url : unable.url, mp3, 'tone.mp3')),
    );
    for (const upload of uploads) assert.equal(upload.status, 201, JSON.stringify(upload.body));
    for (const upload of uploads) {
      const ended = await followToEnd([unable.url, able.url], upload.body.uid as string, 60_000);
      assert.equal(ended.enhancement_status, 'COMPLETED', JSON.stringify(ended));
    }
    // A WAV needs no ffmpeg: the instance without it still takes those.
    const wav = await uploadWav(unable.url, makeWav(0.5, 16_000));
    assert.equal((await followToEnd([unable.url], wav.body.uid as string)).enhancement_status, 'COMPLETED');
  });

  it('says in /healthz that it has no ffmpeg', async () => {
    const answer = await fetch(`${unable.url}/healthz`);
    assert.equal(answer.status, 200, 'it still serves');
    const body = (await answer.json()) as Record<string, unknown>;
    assert.equal(body.status, 'ok');
    assert.equal(body.ffmpeg, false, JSON.stringify(body));
    assert.equal(((await (await fetch(`${able.url}/healthz`)).json()) as Record<string, unknown>).ffmpeg, true);
  });
});
