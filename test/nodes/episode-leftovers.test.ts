// What a hard crash leaves of an intro and outro join: its hidden work folder beside the episode (up to
// several times the episode as float WAV). Enhance file removes those in its folder when it starts, saying so
// in the log, and never the folder of a join still under way in the same Node-RED.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { joinEpisode } from '../../src/nodes/episode-join';
import { sweepCutJoins } from '../../src/nodes/join-folders';
import { musicLike, speechLike, writeWavFile } from '../fixtures/audio';
import { helper, initHelper, loadFlow, localConfig, stopHelper, TAB } from './flow-helper';

describe('nodes: the work a crash left of an intro and outro join', function () {
  this.timeout(120_000);
  let userDir: string;
  let outbox: string;

  before(async () => {
    userDir = await initHelper();
    outbox = join(userDir, 'outbox');
    await fsp.mkdir(outbox, { recursive: true });
  });
  after(() => stopHelper());

  it('goes when enhance file starts, with a log line; the rest of the folder stays', async () => {
    const cut = join(outbox, '.take-7_enhanced.mp3.episode-Ab3xZ9');
    await fsp.mkdir(cut);
    await fsp.writeFile(join(cut, 'joined.wav'), Buffer.alloc(3 * 1024 ** 2));
    // Not a join's: another hidden folder, and a file named like a join's folder.
    await fsp.mkdir(join(outbox, '.mine'));
    await fsp.writeFile(join(outbox, '.take-8.mp3.episode-Qw12er'), 'a file');
    await fsp.writeFile(join(outbox, 'take-7_enhanced.mp3'), 'the episode');
    await loadFlow([
      TAB,
      localConfig(),
      { id: 'file', type: 'media-enhance-file', z: 'tab', service: 'svc', output: 'file', folder: 'outbox', wires: [] },
    ]);
    const told = () =>
      helper
        .log()
        .getCalls()
        .map((call) => (call.args[0] as { msg?: unknown }).msg)
        .filter((msg): msg is string => typeof msg === 'string' && msg.includes('join cut short'));
    for (let i = 0; i < 100 && told().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(told(), [`removed ${cut} (3.0 MiB): the work of an intro and outro join cut short`]);
    assert.deepEqual((await fsp.readdir(outbox)).sort(), [
      '.mine',
      '.take-8.mp3.episode-Qw12er',
      'take-7_enhanced.mp3',
    ]);
    await helper.unload();
  });

  it('a join under way keeps its folder through a sweep, and finishes', async () => {
    const folder = join(userDir, 'live');
    await fsp.mkdir(folder);
    const episode = join(folder, 'episode.wav');
    await writeWavFile(episode, { sampleRate: 44_100, channels: 1, bits: 16 }, 40, speechLike(44_100, 1, 2, -26));
    const intro = join(folder, 'intro.wav');
    await writeWavFile(intro, { sampleRate: 44_100, channels: 2, bits: 16 }, 10, musicLike(44_100, 2, 3, -12));
    const joining = joinEpisode(
      episode,
      { intro, crossfadeSeconds: 0 },
      { targetLufs: -16, ceilingDbtp: -1, maxLimitingDb: 8 },
      'ffmpeg',
    );
    let work: string | undefined;
    for (let i = 0; i < 200 && !work; i++) {
      work = (await fsp.readdir(folder)).find((name) => name.startsWith('.episode.wav.episode-'));
      if (!work) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(work, 'the join made its work folder');
    const lines: string[] = [];
    await sweepCutJoins(folder, (line) => lines.push(line));
    assert.deepEqual(lines, []);
    assert.ok((await fsp.stat(join(folder, work))).isDirectory(), 'the work folder is still there after the sweep');
    const report = await joining;
    assert.ok(Math.abs(report.duration_s - 50) < 0.1, `${report.duration_s} s`);
    assert.deepEqual((await fsp.readdir(folder)).sort(), ['episode.wav', 'intro.wav']);
  });

  it('leaves a join another live process owns, and takes one whose process is gone', async () => {
    const folder = join(userDir, 'shared');
    await fsp.mkdir(folder);
    // Another Node-RED on this machine, joining now: its process runs (this test's parent stands for it).
    const live = join(folder, '.ep-1.wav.episode-Live01');
    await fsp.mkdir(live);
    await fsp.writeFile(join(live, 'owner'), JSON.stringify({ host: hostname(), pid: process.ppid }));
    // A process that is gone: a child that has already exited.
    const gone = join(folder, '.ep-2.wav.episode-Gone01');
    await fsp.mkdir(gone);
    const exited = spawnSync(process.execPath, ['-e', 'process.pid'], { encoding: 'utf8' });
    assert.equal(exited.status, 0);
    await fsp.writeFile(join(gone, 'owner'), JSON.stringify({ host: hostname(), pid: exited.pid }));
    // Another machine sharing the folder, writing now: left; the same, untouched for a day: removed.
    const remote = join(folder, '.ep-3.wav.episode-Remot1');
    await fsp.mkdir(remote);
    await fsp.writeFile(join(remote, 'owner'), JSON.stringify({ host: 'another-host', pid: 1 }));
    const stale = join(folder, '.ep-4.wav.episode-Stale1');
    await fsp.mkdir(stale);
    await fsp.writeFile(join(stale, 'owner'), JSON.stringify({ host: 'another-host', pid: 1 }));
    const dayAgo = new Date(Date.now() - 24 * 3600 * 1000);
    await fsp.utimes(stale, dayAgo, dayAgo);

    const lines: string[] = [];
    await sweepCutJoins(folder, (line) => lines.push(line));

    assert.deepEqual((await fsp.readdir(folder)).sort(), ['.ep-1.wav.episode-Live01', '.ep-3.wav.episode-Remot1']);
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.ok(await fsp.stat(join(live, 'owner')), "the live join's folder is whole");
  });
});
