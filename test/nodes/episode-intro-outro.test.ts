// Enhance file with an intro and an outro: real encodes made here with ffmpeg (an MP3 episode with tags and
// chapters, a loud MP3 music intro, a quiet M4A music outro), run through the Node-RED runtime and the
// built-in engine, and the published file measured part by part with ffmpeg's ebur128.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { writeEpisodeParts } from '../fixtures/episode';
import { ffmpeg, ffmpegLoudness, ffmpegLoudnessBetween, probe } from '../fixtures/ffmpeg';
import { catchAll, helper, initHelper, loadFlow, localConfig, nextInput, stopHelper, TAB } from './flow-helper';

type Episode = {
  episode_start_s: number;
  duration_s: number;
  crossfade_s: number;
  intro: { duration_s: number; input_loudness_lufs: number };
  outro: { duration_s: number; input_loudness_lufs: number };
  chapters: { start: number; end: number; title?: string }[];
};

describe('nodes: enhance file joins an intro and an outro to the episode', function () {
  this.timeout(240_000);
  let userDir: string;
  let media: string;

  before(async () => {
    userDir = await initHelper();
    media = join(userDir, 'media');
    await fsp.mkdir(media, { recursive: true });
    // A 16 s episode (MP3 with a title and two chapters), a loud 6 s music intro (MP3) and a quiet 5 s outro (M4A).
    await writeEpisodeParts(media, {
      episodeSeconds: 16,
      introSeconds: 6,
      outroSeconds: 5,
      title: 'Episode 12',
      seed: 7,
    });
  });
  after(() => stopHelper());
  afterEach(() => helper.unload());

  const flowWith = (node: Record<string, unknown>) => [
    TAB,
    localConfig(),
    {
      id: 'file',
      type: 'media-enhance-file',
      z: 'tab',
      service: 'svc',
      model: 'FINCH',
      output: 'file',
      folder: 'outbox',
      ...node,
      wires: [['out']],
    },
    { id: 'out', type: 'helper', z: 'tab' },
    ...catchAll(),
  ];

  it('levels the intro and the outro to the target, moves the chapters by the intro and keeps the MP3 encoding and tags', async () => {
    await loadFlow(
      flowWith({ intro: join(media, 'intro.mp3'), outro: 'media/outro.m4a', crossfade: '1', loudnessTarget: '-16' }),
    );
    const out = nextInput(helper.getNode('out'), 180_000);
    helper.getNode('file').receive({ filename: join(media, 'episode.mp3') });
    const msg = await out;
    const path = msg.filename as string;
    const episode = msg.episode as Episode;
    assert.ok(path.endsWith('.mp3'), path);

    // Where each part lies: the intro until the episode starts, the episode until the outro's chapter (the
    // episode's chapters hold both crossfades), each measured without a crossfade (two parts sounding together).
    const outroStart = episode.chapters[episode.chapters.length - 1].start;
    const parts = {
      intro: await ffmpegLoudnessBetween(path, 0, episode.episode_start_s),
      episode: await ffmpegLoudnessBetween(path, episode.episode_start_s + 1, outroStart - 1),
      outro: await ffmpegLoudnessBetween(path, outroStart, episode.duration_s),
    };
    for (const [part, lufs] of Object.entries(parts))
      assert.ok(Math.abs(lufs + 16) <= 0.5, `${part}: ${lufs} LUFS, target -16`);
    assert.ok(episode.intro.input_loudness_lufs > -14, `the intro came loud: ${episode.intro.input_loudness_lufs}`);
    assert.ok(episode.outro.input_loudness_lufs < -24, `the outro came quiet: ${episode.outro.input_loudness_lufs}`);
    const whole = await ffmpegLoudness(path);
    assert.ok(whole.truePeakDbtp <= -1 + 0.05, `true peak ${whole.truePeakDbtp} dBTP, limit -1`);

    // The intro (6 s) less the 1 s crossfade: the episode starts at 5 s, within an MP3 frame of the decoder's delay.
    assert.ok(Math.abs(episode.episode_start_s - 5) < 0.1, `episode starts at ${episode.episode_start_s}`);
    const probed = await probe(path);
    const chapters = probed.chapters.map((c) => [c.tags?.title, Number(c.start_time), Number(c.end_time)] as const);
    assert.deepEqual(
      chapters.map(([title]) => title),
      ['Intro', 'Hello', 'News', 'Outro'],
    );
    const start = episode.episode_start_s;
    assert.ok(
      Math.abs(chapters[0][1]) < 0.01 && Math.abs(chapters[0][2] - start) < 0.01,
      `intro chapter ${chapters[0].join(' ')}`,
    );
    assert.ok(Math.abs(chapters[1][1] - start) < 0.01, `first chapter moved by the intro: ${chapters[1].join(' ')}`);
    assert.ok(
      Math.abs(chapters[2][1] - (start + 8)) < 0.05,
      `second chapter moved by the intro: ${chapters[2].join(' ')}`,
    );
    assert.ok(
      Math.abs(chapters[3][2] - episode.duration_s) < 0.05,
      `outro chapter ends the file: ${chapters[3].join(' ')}`,
    );
    const audio = probed.streams.find((s) => s.codec_type === 'audio')!;
    assert.equal(audio.codec_name, 'mp3');
    assert.equal(audio.sample_rate, '44100');
    assert.equal(audio.channels, 1);
    assert.equal(audio.bit_rate, '128000');
    assert.equal(probed.format.tags?.title, 'Episode 12');
    assert.ok(Math.abs(Number(probed.format.duration) - episode.duration_s) < 0.1, `${probed.format.duration} s`);
    // 16 s of episode, 6 s of intro and 5 s of outro, two 1 s crossfades.
    assert.ok(Math.abs(episode.duration_s - 25) < 0.15, `${episode.duration_s} s`);
  });

  it('joins a WAV episode given as a Buffer, end to end without a crossfade, msg.intro overriding the setting', async () => {
    await loadFlow(flowWith({ intro: 'media/missing.mp3', output: 'buffer' }));
    const out = nextInput(helper.getNode('out'), 180_000);
    const episodeWav = await fsp.readFile(join(media, 'episode.wav'));
    helper.getNode('file').receive({ payload: episodeWav, filename: 'episode.wav', intro: join(media, 'intro.mp3') });
    const msg = await out;
    const episode = msg.episode as Episode;
    assert.equal(episode.episode_start_s, 6);
    assert.equal(episode.outro, undefined);
    const written = join(media, 'joined.wav');
    await fsp.writeFile(written, msg.payload as Buffer);
    assert.ok(Math.abs((await ffmpegLoudnessBetween(written, 0, 6)) + 16) <= 0.5, 'the intro on target');
    assert.ok(Math.abs((await ffmpegLoudnessBetween(written, 6, 22)) + 16) <= 0.5, 'the episode on target');
    const audio = (await probe(written)).streams[0];
    assert.equal(audio.sample_rate, '44100');
    assert.equal(audio.channels, 1);
    assert.ok(Math.abs(Number((await probe(written)).format.duration) - 22) < 0.01);
  });

  it('trims the pauses of the episode (Trim pauses over) and then joins the intro: the chapters follow both', async () => {
    // Two takes of the episode with 4 s of silence between: one pause over the limit.
    const gapped = join(media, 'gapped.mp3');
    await ffmpeg([
      ...[
        '-i',
        join(media, 'episode.wav'),
        '-f',
        'lavfi',
        '-i',
        'anullsrc=r=44100:cl=mono:d=4',
        '-i',
        join(media, 'episode.wav'),
      ],
      ...['-i', join(media, 'chapters.txt'), '-filter_complex', '[0:a][1:a][2:a]concat=n=3:v=0:a=1[a]', '-map', '[a]'],
      ...['-map_chapters', '3', '-c:a', 'libmp3lame', '-b:a', '128k', gapped],
    ]);
    await loadFlow(flowWith({ intro: join(media, 'intro.mp3'), trimPauses: '1.5' }));
    const out = nextInput(helper.getNode('out'), 180_000);
    helper.getNode('file').receive({ filename: gapped });
    const msg = await out;
    const trimmed = (msg.media as { enhancement_params: { pauses_trimmed: { count: number; cut_s: number } } })
      .enhancement_params.pauses_trimmed;
    assert.ok(trimmed.count >= 1, JSON.stringify(trimmed));
    // The 4 s of silence, with the pauses of the takes that touch it, now 1.5 s (the engine test measures pauses exactly).
    assert.ok(trimmed.cut_s > 2.4 && trimmed.cut_s < 4.5, `cut ${trimmed.cut_s} s`);
    const episode = msg.episode as Episode;
    assert.ok(Math.abs(episode.duration_s - (6 + 36 - trimmed.cut_s)) < 0.15, `${episode.duration_s} s`);
    const titles = (await probe(msg.filename as string)).chapters.map((c) => c.tags?.title);
    assert.deepEqual(titles, ['Intro', 'Hello', 'News']);
  });

  it('an intro that is not there, or a crossfade out of bounds, goes to Catch before anything is sent', async () => {
    await loadFlow(flowWith({}));
    const caught = nextInput(helper.getNode('caught'));
    helper.getNode('file').receive({ filename: join(media, 'episode.mp3'), intro: 'media/nothing-here.mp3' });
    const { error } = (await caught) as { error: { code: string; message: string } };
    assert.equal(error.code, 'VALIDATION');
    assert.match(error.message, /msg\.intro: no such file \(got "media\/nothing-here\.mp3"\)|msg\.intro.*no such file/);

    await helper.unload();
    await loadFlow(flowWith({ outro: join(media, 'outro.m4a'), crossfade: '12' }));
    const again = nextInput(helper.getNode('caught'));
    helper.getNode('file').receive({ filename: join(media, 'episode.mp3') });
    const second = ((await again) as { error: { message: string } }).error;
    assert.match(second.message, /Crossfade.*from 0 to 10/);
  });
});
