// A job's run on an engine that stood still past the shared queue's lock: it learns it lost the job only
// when it next asks (the fence). Nothing it reports after that may show: the progress a client reads is
// the progress of the engine now running the job, never a stale one's jumping in between.
import assert from 'node:assert/strict';
import { Faults } from '../../src/engine/faults';
import { Jobs, type JobFence } from '../../src/engine/jobs/jobs';
import type { WorkerPool } from '../../src/engine/jobs/worker-pool';
import type { MediaFiles } from '../../src/engine/storage/media-files';
import type { MediaRecord } from '../../src/engine/storage/media-record';
import type { MediaRecords } from '../../src/engine/storage/media-records';

describe('engine: a run that lost its job writes no progress', function () {
  it('shows the progress reported while it held the job, and none after another engine took it', async () => {
    const record = {
      uid: 'u1',
      file_name: 'talk.wav',
      enhancement_status: 'PENDING',
      enhancement_params: {},
      inserted_at: '',
      updated_at: '',
      internal: {
        source: 'upload',
        settings: { loudness_target: -16, true_peak: -1, enhancement_model: 'FINCH' },
        input: { ext: 'wav', kind: 'audio', contentType: 'audio/wav' },
      },
    } as unknown as MediaRecord;
    const shown: number[] = [];
    const states: string[] = [];
    const records = {
      update: (r: MediaRecord, patch: Partial<MediaRecord>) => {
        Object.assign(r, patch);
        if (patch.enhancement_status) states.push(patch.enhancement_status);
        return Promise.resolve();
      },
      setProgress: (_r: MediaRecord, progress: { percent: number }) => shown.push(progress.percent),
    } as unknown as MediaRecords;
    const work = {
      inputPath: '/nowhere/input',
      outputPath: '/nowhere/output',
      loadInput: () => Promise.resolve(),
      saveOutput: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
    const files = { work: () => Promise.resolve(work) } as unknown as MediaFiles;
    let held = true;
    const pool = {
      run: async (_job: unknown, onProgress: (share: number) => void) => {
        onProgress(0.2);
        await new Promise((resolve) => setTimeout(resolve, 20));
        held = false; // the engine stood still; another one took the job meanwhile
        onProgress(0.6);
        onProgress(0.9);
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { params: {}, output: { ext: 'wav', kind: 'audio', contentType: 'audio/wav' } };
      },
    } as unknown as WorkerPool;
    const told: string[] = [];
    const jobs = new Jobs(records, files, pool, new Faults({}), {
      dataDir: '/nowhere',
      processingDelayMs: 0,
      fetchTimeoutMs: 1000,
      maxUploadBytes: 1,
      fetchGuard: undefined as never,
      onErrorLine: (line) => told.push(line),
    });
    const lost = new AbortController();
    const fence: JobFence = { lost: lost.signal, holds: () => Promise.resolve(held) };

    await jobs.process(record, fence);

    assert.deepEqual(shown, [20], 'only the progress reported while the run held the job');
    assert.deepEqual(states, ['PROCESSING'], 'and no end written');
    assert.match(told.join('\n'), /another engine has taken this job over/);
  });
});
