// A 1-hour recording through the engine, in a process of its own, costs no more memory to process than a
// 10-minute one: the engine streams it through speech enhancement (FINCH: RNNoise; LARK_V2's
// DeepFilterNet3 runs about 8x realtime, so an hour would take minutes more: its own flat memory is
// checked in test/enhance/dfn.test.ts) and loudness normalization. Measured from the end of the upload:
// receiving a large upload leaves up to ~40 MiB of spent socket buffers for V8 to collect later, which
// levels off after about an hour of audio and says nothing about processing. An hour against 10 minutes
// shows flatness as well as 2 hours did (2 hours grew 12.6 MiB more than 10 minutes; the 50 minutes between
// held whole, even as 16-bit samples, would be 46 MiB more) at half the work, which a busy machine needs.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeSamples, speechLike, wavHeader, type TestFormat } from '../fixtures/audio';
import type { EnhancementParams } from './answers';
import { call, multipart } from './helpers';

const KEY = 'long-file-key';
const CLI = join(__dirname, '..', '..', 'src', 'engine', 'cli.js');

describe('engine: a 1-hour file with flat memory', function () {
  // Enough for the short run on a busy machine; the long run's own limit is set from the short one's time.
  this.timeout(480_000);
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'long-file-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  /** `minutes` of speech-like audio: one minute made, then repeated (the content does not matter here). */
  async function speechFile(name: string, minutes: number): Promise<string> {
    const format: TestFormat = { sampleRate: 8000, channels: 1, bits: 16 };
    const minute = encodeSamples(format, speechLike(8000, 1, 5, -30)(8000 * 60));
    const path = join(dir, name);
    await writeFile(path, wavHeader(format, minute.length * minutes));
    for (let i = 0; i < minutes; i++) await appendFile(path, minute);
    return path;
  }

  /** How far resident memory rose above its level at the end of the upload while `path` was processed, in MiB. */
  async function processingGrowthFor(path: string): Promise<{ growthMiB: number; params: EnhancementParams }> {
    const engine: ChildProcess = spawn(
      process.execPath,
      [CLI, '--port', '0', '--data-dir', join(dir, `data-${Date.now()}`), '--key', KEY, '--workers', '1', '--quiet'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const [chunk] = (await once(engine.stdout!, 'data')) as [Buffer];
      const url = /listening on (http:\/\/\S+)/.exec(chunk.toString())![1];
      const { body, headers } = multipart(await readFile(path), 'long.wav', {
        media_enhancement: JSON.stringify({ loudness_target: -16, true_peak: -1, enhancement_model: 'FINCH' }),
      });
      const created = await call(`${url}/v2/medias`, {
        method: 'POST',
        headers: { ...headers, 'x-api-key': KEY },
        body,
      });
      assert.equal(created.status, 201, created.text);
      const statusFile = `/proc/${engine.pid}/status`;
      const kib = (field: string, status: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
      const atStart = kib('VmRSS', await readFile(statusFile, 'utf8'));
      await writeFile(`/proc/${engine.pid}/clear_refs`, '5'); // the peak (VmHWM) counts from now
      for (;;) {
        const meta = (await call(`${url}/v2/medias/${created.json.uid}/metadata`, { headers: { 'x-api-key': KEY } }))
          .json;
        if (meta.enhancement_status === 'COMPLETED') {
          const peak = kib('VmHWM', await readFile(statusFile, 'utf8'));
          return { growthMiB: (peak - atStart) / 1024, params: meta.enhancement_params };
        }
        assert.notEqual(meta.enhancement_status, 'FAILED', JSON.stringify(meta.error));
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    } finally {
      engine.kill();
      await once(engine, 'exit');
    }
  }

  it('enhances and normalizes 1 hour at the same peak memory as 10 minutes (within 24 MiB, from the end of the upload)', async function () {
    const started = Date.now();
    const short = await processingGrowthFor(await speechFile('ten-minutes.wav', 10));
    // A guard against a hang, not a speed check: 6 times the audio gets 4 times the time that would take at
    // the short run's pace, whatever the machine's load.
    this.timeout(Math.max(480_000, 4 * 6 * (Date.now() - started)));
    const long = await processingGrowthFor(await speechFile('one-hour.wav', 60));
    assert.ok(
      Math.abs(long.params.output_loudness_lufs! - -16) <= 0.5,
      `1 hour came out at ${long.params.output_loudness_lufs} LUFS`,
    );
    assert.ok(long.params.output_true_peak_dbtp! <= -0.9);
    assert.equal(long.params.speech_enhancement.chain, 'high-pass, noise reduction');
    // What does grow with the length: the per-10 ms frame track, 3.2 MB an hour (measured with LARK_V2 and
    // RNNoise: 22.6 MiB for 10 minutes, 35.2 MiB for 2 hours); a file held whole would be tens of MiB.
    const message = `peak RSS rose ${short.growthMiB.toFixed(1)} MiB processing 10 minutes, ${long.growthMiB.toFixed(1)} MiB processing 1 hour`;
    console.log(`      ${message}`);
    assert.ok(long.growthMiB - short.growthMiB < 24, message);
  });
});
