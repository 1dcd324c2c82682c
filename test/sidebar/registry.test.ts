// The sidebar registry on its own: what rows a job makes and when, the last 50 results, and which media
// the editor may download. (The nodes' use of it runs in sidebar-state.test.ts.)
import assert from 'node:assert/strict';
import { MediaEnhanceError } from '../../src/client/errors';
import { SidebarRegistry } from '../../src/sidebar/registry';
import { StatePublisher } from '../../src/sidebar/state-publisher';
import { IN_FLIGHT_LISTED, STATE_TOPIC } from '../../src/sidebar/state';

const START = { nodeId: 'n1', nodeName: 'wait', nodeType: 'media-enhance-wait', serviceId: 'svc' };

describe('sidebar registry', () => {
  it('keeps the last 50 results, newest first, one row per media', () => {
    const registry = new SidebarRegistry();
    for (let i = 0; i < 60; i++) {
      const job = registry.beginJob(START, 'processing');
      job.media(`media-${i}`);
      job.done({ uid: `media-${i}`, enhancement_status: 'COMPLETED' }, true);
    }
    const results = registry.snapshot().results;
    assert.equal(results.length, 50);
    assert.equal(results[0].uid, 'media-59');
    assert.equal(results[49].uid, 'media-10');
    assert.ok(!registry.handled('media-9'), 'a media whose result fell off is no longer handled');

    const again = registry.beginJob({ ...START, nodeId: 'n2', nodeType: 'media-enhance-download' }, 'downloading');
    again.media('media-20');
    again.done(undefined, true);
    const rows = registry.snapshot().results.filter((row) => row.uid === 'media-20');
    assert.equal(rows.length, 1);
    assert.equal(rows[0].nodeId, 'n2', 'the newest row of a media replaces the older one');
    assert.equal(registry.snapshot().results[0].uid, 'media-20');
  });

  it("names every result's file: a failure before any media by its message's file, a wait by the upload's row", () => {
    const registry = new SidebarRegistry();
    const early = registry.beginJob({ ...START, nodeType: 'media-enhance-file' }, 'starting');
    early.file('broken.wav');
    early.failed(new MediaEnhanceError('VALIDATION', 'msg.filename: not a file'));
    const upload = registry.beginJob({ ...START, nodeType: 'media-enhance-upload' }, 'uploading');
    upload.media('u-7', 'interview.wav');
    upload.done({ uid: 'u-7', enhancement_status: 'PENDING' }, false);
    const upload2 = registry.beginJob({ ...START, nodeType: 'media-enhance-upload' }, 'uploading');
    upload2.media('u-8', 'call.wav');
    const wait = registry.beginJob(START, 'waiting');
    wait.media('u-8'); // the uid alone: the upload still in flight names it
    wait.failed(new MediaEnhanceError('JOB_FAILED', 'the input is not audio', { mediaUid: 'u-8' }));
    const [failedWait, failedEarly] = registry.snapshot().results;
    assert.deepEqual(
      [failedEarly.fileName, failedEarly.uid, failedWait.fileName, failedWait.uid],
      ['broken.wav', null, 'call.wav', 'u-8'],
    );
  });

  it('lists a job in flight until it ends; a started media leaves no result, a failure does', () => {
    let now = 1_000;
    const registry = new SidebarRegistry(() => now);
    let changes = 0;
    registry.onChange(() => changes++);
    const upload = registry.beginJob({ ...START, nodeType: 'media-enhance-upload' }, 'starting');
    upload.stage('uploading 42%');
    upload.stage('uploading 42%');
    assert.equal(changes, 2, 'a stage shown again is no change');
    now = 2_000;
    upload.stage('processing', 1_500);
    assert.deepEqual(
      registry.snapshot().inFlight.map(({ stage, stageSince, startedAt }) => ({ stage, stageSince, startedAt })),
      [{ stage: 'processing', stageSince: 1_500, startedAt: 1_000 }],
    );
    upload.media('u-1', 'take.wav');
    assert.ok(registry.handled('u-1'), 'a media in flight can be downloaded');
    upload.done(undefined, false);
    assert.deepEqual(registry.snapshot().inFlight, []);
    assert.deepEqual(registry.snapshot().results, []);

    const wait = registry.beginJob(START, 'processing');
    wait.media('u-2');
    wait.failed(new MediaEnhanceError('JOB_FAILED', 'the input is not audio (media u-2 ended FAILED)'));
    wait.done(undefined, true);
    const [failed] = registry.snapshot().results;
    assert.equal(registry.snapshot().results.length, 1, 'a job ends once');
    assert.deepEqual(
      {
        outcome: failed.outcome,
        code: failed.errorCode,
        error: failed.error,
        uid: failed.uid,
        finishedAt: failed.finishedAt,
      },
      {
        outcome: 'failed',
        code: 'JOB_FAILED',
        error: 'the input is not audio (media u-2 ended FAILED)',
        uid: 'u-2',
        finishedAt: 2_000,
      },
    );

    const stopped = registry.beginJob(START, 'processing');
    stopped.dropped();
    stopped.stage('late');
    assert.deepEqual(registry.snapshot().inFlight, [], 'a job dropped at close shows nothing more');
  });

  it('forgets a service when its config node closes, but not when a newer one with its id took its place', () => {
    const registry = new SidebarRegistry();
    const first = registry.addService('svc', { name: 'one', kind: 'built-in' });
    const second = registry.addService('svc', { name: 'two', kind: 'built-in' });
    first.failed('stale');
    first.remove();
    assert.deepEqual(
      registry.snapshot().services.map(({ name, error }) => ({ name, error })),
      [{ name: 'two', error: null }],
    );
    second.remove();
    assert.deepEqual(registry.snapshot().services, []);
  });

  it('with 1500 jobs in flight lists the oldest 100 and counts the rest, in a state of bounded size', () => {
    const registry = new SidebarRegistry();
    const long = (what: string) => `${what} `.repeat(2_000);
    // Fifty finished media with the longest texts a user or a service could give them.
    for (let i = 0; i < 50; i++) {
      const job = registry.beginJob({ ...START, nodeName: long('name') }, 'processing');
      job.media(`3f1c9a2e-0000-4000-8000-0000000000${String(i).padStart(2, '0')}`, long('file'));
      job.failed(new MediaEnhanceError('JOB_FAILED', long('reason')));
    }
    const jobs = Array.from({ length: 1500 }, (_, i) => {
      const job = registry.beginJob({ ...START, nodeId: `n${i}`, nodeName: long('name') }, long('stage'));
      job.media(`3f1c9a2e-0000-4000-8000-${String(i).padStart(12, '0')}`);
      return job;
    });
    const state = registry.snapshot();
    assert.equal(state.inFlight.length, IN_FLIGHT_LISTED);
    assert.equal(state.inFlightMore, 1500 - IN_FLIGHT_LISTED);
    assert.equal(state.inFlight[0].nodeId, 'n0', 'the oldest first');
    const bytes = Buffer.byteLength(JSON.stringify(state));
    assert.ok(bytes < 128 * 1024, `the state is ${bytes} bytes with the longest texts (at most 128 KiB)`);
    assert.ok(state.results.every((row) => row.error!.length <= 200 && row.fileName!.length <= 200));
    assert.ok(state.inFlight[0].nodeName.endsWith('…'), 'a cut text says so');
    // Ended jobs make room: the rows listed follow.
    for (const job of jobs.slice(0, 1450)) job.dropped();
    assert.equal(registry.snapshot().inFlight.length, 50);
    assert.equal(registry.snapshot().inFlightMore, 0);
  });

  it('publishes a signal of a few bytes, never the state, however many jobs are in flight', () => {
    const registry = new SidebarRegistry();
    const published: unknown[] = [];
    const publisher = new StatePublisher(registry, (topic, data, retain) => {
      assert.equal(topic, STATE_TOPIC);
      assert.equal(retain, true);
      published.push(data);
    });
    publisher.start();
    try {
      for (let i = 0; i < 1500; i++) registry.beginJob({ ...START, nodeId: `n${i}` }, 'processing');
      assert.ok(published.length >= 1);
      for (const data of published) {
        assert.deepEqual(Object.keys(data as object), ['version']);
        assert.ok(JSON.stringify(data).length < 32);
      }
    } finally {
      publisher.stop();
    }
  });
});
