// Worker threads that stay idle end and give their memory back (a model's WebAssembly memory never
// shrinks while its thread lives); the next media starts a fresh thread and is processed as before.
// The real pool with the real processor, on the package's speech sample made stereo (so a second thread
// is lent for a channel).
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkerPool } from '../../src/engine/jobs/worker-pool';
import type { ProcessJob } from '../../src/engine/processors/processor';
import { ffmpeg } from '../fixtures/ffmpeg';
import { SPEECH_SAMPLE } from '../enhance/speech-sample';

const PROCESSOR = join(__dirname, '..', '..', 'src', 'engine', 'processors', 'enhance-processor.js');
const IDLE_MS = 400;

async function until(check: () => boolean, withinMs: number): Promise<boolean> {
  const end = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

describe('engine: idle worker threads end and give their memory back', function () {
  this.timeout(120_000);
  let dir: string;
  let input: string;
  const pools: WorkerPool[] = [];

  const job = (name: string): ProcessJob => ({
    inputPath: input,
    outputPath: join(dir, name),
    input: { kind: 'audio', ext: 'wav', contentType: 'audio/wav' },
    settings: { loudness_target: -16, true_peak: -1, enhancement_model: 'FINCH' },
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'worker-idle-'));
    input = join(dir, 'stereo.wav');
    await ffmpeg(['-i', SPEECH_SAMPLE, '-ac', '2', input]);
  });
  after(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
    await rm(dir, { recursive: true, force: true });
  });

  it('ends every thread once idle for the set time, never one at work, and a later job starts a fresh one', async () => {
    const pool = new WorkerPool(2, PROCESSOR, { ffmpegPath: 'ffmpeg' }, { idleMs: IDLE_MS });
    pools.push(pool);
    const started = Date.now();
    const first = await pool.run(job('first.wav'));
    // The job took longer than the idle time: the thread running it was not ended under it.
    assert.ok(Date.now() - started > IDLE_MS, 'the job outlasts the idle time (else this proves nothing)');
    assert.equal(first.output.ext, 'wav');
    assert.ok(pool.threads >= 1);
    assert.ok(await until(() => pool.threads === 0, 10 * IDLE_MS), `${pool.threads} threads still alive`);

    const second = await pool.run(job('second.wav'));
    assert.deepEqual(second.params.target_reached, true);
    assert.ok((await stat(join(dir, 'second.wav'))).size > 0);
    assert.ok(pool.threads >= 1, 'a fresh thread ran it');
    assert.ok(await until(() => pool.threads === 0, 10 * IDLE_MS), 'and ended in turn');
  });

  it('keeps its threads with an idle time of 0', async () => {
    const pool = new WorkerPool(2, PROCESSOR, { ffmpegPath: 'ffmpeg' }, { idleMs: 0 });
    pools.push(pool);
    await pool.run(job('kept.wav'));
    const alive = pool.threads;
    assert.ok(alive >= 1);
    await new Promise((resolve) => setTimeout(resolve, 3 * IDLE_MS));
    assert.equal(pool.threads, alive);
  });
});
