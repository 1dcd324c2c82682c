// The soak's judgement, on made-up runs: a loss, a hang, a duplicate, a cut-off output, an unexplained
// failure must each be seen; and its section of bench/RESULTS.md must replace only itself.
import assert from 'node:assert/strict';
import { causeOf, tally, type ChaosEvent } from '../../bench/soak-account';
import { countAnswers, lastRequests } from '../../bench/soak-engine';
import type { SoakInput } from '../../bench/soak-media';
import type { FailureRecord, OutputRecord } from '../../bench/soak-records';
import { readSection, replaceSection } from '../../bench/results-sections';
import { loudnessVerdict, wavShape } from '../../bench/soak-verify';
import { encodeWav, sine } from '../fixtures/audio';

const input = (name: string): SoakInput => ({
  name,
  staged: '',
  sha256: '',
  frames: 100,
  sampleRate: 16_000,
  channels: 1,
  kind: 'speech',
});
const output = (name: string, uid: string): OutputRecord => ({
  media_uid: uid,
  input: name,
  output: `${name}_enhanced.wav`,
  original: name,
  at: 0,
});
const failure = (name: string | null, uid: string | null, code: string, message: string, at = 0): FailureRecord => ({
  input: name,
  media_uid: uid,
  code,
  message,
  at,
});
const media = (uid: string, fileName: string, status = 'COMPLETED') => ({ uid, fileName, status, insertedAt: 0 });

describe('soak accounting', () => {
  it('finds the lost, hung, duplicated and orphaned among inputs and media', () => {
    const inputs = ['a', 'b', 'c', 'd', 'e'].map(input);
    const dropped = new Map(inputs.map((i, n) => [i.name, n * 1000]));
    const events: ChaosEvent[] = [
      { name: 'full deploy 1', at: 2500, backAt: 2600 },
      { name: 'engine kill -9 and start', at: 3500, backAt: 3600 },
      { name: 'Node-RED kill -9 and start', at: 9000, backAt: 9100 },
    ];
    const result = tally(
      inputs,
      dropped,
      [output('a', 'u-a1'), output('a', 'u-a2'), output('d', 'u-d2')],
      [
        failure('b', 'u-b', 'JOB_FAILED', 'processing failed (an injected fault) (media u-b ended FAILED)'),
        failure('d', null, 'HTTP', 'other side closed'),
      ],
      [
        media('u-a1', 'a'),
        media('u-a2', 'a'),
        media('u-b', 'b', 'FAILED'),
        media('u-c', 'c', 'PROCESSING'),
        media('u-d1', 'd'),
        media('u-d2', 'd'),
      ],
      events,
      { inbox: new Set(['e']), work: new Set(['c']) },
      new Map([['u-c', 3000]]), // c's media was last asked about after the deploy: lost at the restart of Node-RED
    );
    assert.equal(result.dropped, 5);
    assert.equal(result.withOutput, 2);
    assert.equal(result.failed, 1);
    assert.deepEqual(result.duplicated, ['a']);
    assert.deepEqual(
      result.lost.map((l) => [l.input, l.left, l.during, l.media.join()]),
      [
        ['c', 'work/', 'Node-RED kill -9 and start', 'u-c PROCESSING'],
        ['e', 'inbox/', 'Node-RED kill -9 and start', ''],
      ],
    );
    assert.deepEqual(
      result.hung.map((m) => m.uid),
      ['u-c'],
    );
    assert.deepEqual(
      result.orphaned.map((o) => o.media.uid),
      ['u-d1'],
    );
    assert.match(result.orphaned[0].why, /upload failed at the flow \(HTTP: other side closed\)/);
    assert.deepEqual(result.outputAndFailure, ['d']);
  });

  it('explains a failure by an injected fault or the engine restart, and nothing else', () => {
    const restart: ChaosEvent[] = [{ name: 'engine kill -9 and start', at: 10_000, backAt: 14_000 }];
    const cause = (code: string, message: string, at = 0) => causeOf(failure('x', null, code, message, at), restart);
    assert.equal(
      cause('JOB_FAILED', 'processing failed (an injected fault) (media m ended FAILED [PROCESSING_FAILED])'),
      'injected: processing ended FAILED',
    );
    assert.match(cause('HTTP', 'injected fault: internal error (POST /v2/medias: HTTP 500)'), /^injected: 500/);
    assert.match(cause('NETWORK', 'connect ECONNREFUSED 127.0.0.1:9 (POST /v2/medias)', 12_000), /^engine restart/);
    assert.match(
      cause('RATE_LIMITED', 'rate limit exceeded (GET /v2/medias/m/file: HTTP 429)', 14_500),
      /^engine restart/,
    );
    assert.equal(
      cause('RATE_LIMITED', 'rate limit exceeded (GET /v2/medias/m/file: HTTP 429)', 60_000),
      '429, retries used up',
    );
    assert.equal(cause('HTTP', 'other side closed', 60_000), 'injected: connection reset mid-answer');
    assert.equal(cause('NETWORK', 'connect ECONNREFUSED 127.0.0.1:9 (POST /v2/medias)', 60_000), 'unexplained');
    assert.equal(cause('TIMEOUT', 'media m: not completed after 240 s (PROCESSING)'), 'unexplained');
  });

  it('tells the forced 429s after each start of the engine from those of its limits', () => {
    const line = (path: string, status: number) =>
      `2026-01-01T00:00:00.000Z ${path.startsWith('/v2/medias/') ? 'GET' : 'POST'} ${path} ${status} 1ms`;
    const first = [
      line('/v2/medias', 500),
      ...Array.from({ length: 5 }, () => line('/v2/medias', 429)),
      line('/v2/medias', 201),
      line('/v2/medias/u/metadata', 429),
    ];
    const second = [line('/v2/medias/u/file', 429), line('/v2/medias/u/file', 200)];
    const answers = countAnswers([first.join('\n'), second.join('\n')]);
    assert.equal(answers.forced429, 6); // five after the first start, one after the second
    assert.equal(answers.real429, 1);
    assert.equal(answers.counts.get('POST upload 429'), 5);
    assert.equal(answers.counts.get('GET download 200'), 1);
  });

  it('knows when each media was last asked about: when the request arrived, not when its answer ended', () => {
    const log = [
      '2026-01-01T00:00:10.000Z GET /v2/medias/u1/metadata 200 1ms',
      '2026-01-01T00:00:30.000Z GET /v2/medias/u1/file?step=ENHANCED 200 15000ms', // a slow (dripping) download
      '2026-01-01T00:00:12.000Z GET /v2/medias/u2/metadata 200 2.5ms',
      '2026-01-01T00:00:13.000Z POST /v2/medias 201 3ms',
    ].join('\n');
    assert.deepEqual(
      [...lastRequests([log])],
      [
        ['u1', Date.parse('2026-01-01T00:00:15.000Z')],
        ['u2', Date.parse('2026-01-01T00:00:12.000Z') - 2.5],
      ],
    );
  });
});

describe('soak output check', () => {
  const wav = encodeWav({ sampleRate: 16_000, channels: 1, bits: 16 }, [sine(16_000, 440, -20, 0.25)]);

  it('reads a whole WAV', () => {
    assert.deepEqual(wavShape(wav), { sampleRate: 16_000, channels: 1, frames: 4000 });
  });

  it('refuses a WAV cut short or with bytes after its end', () => {
    assert.throws(() => wavShape(wav.subarray(0, wav.length - 10)), /the RIFF header says \d+ bytes, the file has \d+/);
    assert.throws(() => wavShape(Buffer.concat([wav, Buffer.alloc(4)])), /the RIFF header says/);
    const cut = Buffer.from(wav.subarray(0, wav.length - 10));
    cut.writeUInt32LE(cut.length - 8, 4); // a RIFF size that agrees, a data chunk that does not
    assert.throws(() => wavShape(cut), /chunk "data" runs past the end of the file/);
  });
});

describe('soak loudness verdict', () => {
  it('tells on target, held at the ceiling, off target and over the ceiling apart', () => {
    assert.equal(loudnessVerdict(-16.4, -1.6, 0), 'on target');
    assert.equal(loudnessVerdict(-21, -1.02, 8), 'below target, held at the true-peak ceiling');
    assert.equal(loudnessVerdict(-18.9, -1.4, 0), 'off target'); // no limiting, yet 2.9 LU short
    assert.equal(loudnessVerdict(-21.1, 0.08, 11.9, 0.1), 'true peak above the ceiling');
    assert.equal(loudnessVerdict(-16, -0.7, 0), 'on target'); // within ffmpeg's tolerance of the ceiling
    assert.equal(loudnessVerdict(-16, -0.7, 0, 0.1), 'true peak above the ceiling'); // not within the engine's own
  });
});

describe('bench/RESULTS.md sections', () => {
  const results = '# Benchmark results\n\nintro\n\n## Loudness\n\n| a |\n\n## Soak\n\nold run\n\n## Speech\n\ntable\n';

  it('replaces the soak section and leaves the others as they were', () => {
    const updated = replaceSection(results, 'Soak', '## Soak\n\nnew run');
    assert.equal(updated, results.replace('old run', 'new run'));
    assert.equal(readSection(updated, 'Speech'), '## Speech\n\ntable');
  });

  it('adds the section at the end when there is none', () => {
    const without = '# Benchmark results\n\n## Loudness\n\n| a |\n';
    assert.equal(replaceSection(without, 'Soak', '## Soak\n\nfirst run'), `${without}\n## Soak\n\nfirst run\n`);
  });
});
