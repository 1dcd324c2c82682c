// Several outputs from one job (the several-outputs extension, docs/interface.md#several-outputs): a WAV
// master and an MP3 for the feed from one MP3 upload, and a video's soundtrack alone, each file read back
// with ffprobe (codec, bitrate, rate, channels, tags) and measured by ffmpeg's ebur128; the named steps'
// answers before and after COMPLETED; the 422s of bad outputs; a restart mid-job.
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ffmpeg, ffmpegLoudness, probe, type Probed } from '../fixtures/ffmpeg';
import { SPEECH_SAMPLE } from '../enhance/speech-sample';
import { issues, type EngineJson } from './answers';
import { call, KEY, metadata, settled, startTestEngine, upload, type TestEngine } from './helpers';

const TARGET = -16;
const CEILING = -1;
/** ffmpeg's meter and ours may differ this much on a true peak. */
const METER_TOLERANCE_DB = 0.1;
const ON_TARGET_LU = 0.5;
const TAGS = { title: 'Episode 12', artist: 'The Hosts', album: 'The Show' };

interface AppliedOutput {
  name: string;
  file_name: string;
  output_encoding?: Record<string, unknown>;
  output_loudness_lufs: number;
  target_reached: boolean;
}

describe('engine: several outputs from one job', function () {
  this.timeout(240_000);
  let engine: TestEngine;
  let dir: string;
  /** Real speech in room noise, 44.1 kHz stereo, as an MP3 128k CBR with tags, a cover and two chapters. */
  let episode: Buffer;
  /** An MP4: a test picture and that speech as AAC. */
  let video: Buffer;

  before(async () => {
    engine = await startTestEngine({ limits: { uploadMedia: null, downloadFile: null } });
    dir = await fsp.mkdtemp(join(tmpdir(), 'several-outputs-'));
    const cover = join(dir, 'cover.png');
    await ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x64:duration=0.1', '-frames:v', '1', cover]);
    const chapters = join(dir, 'chapters.txt');
    await fsp.writeFile(
      chapters,
      ';FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=5000\ntitle=Hello\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=5000\nEND=10000\ntitle=Talk\n',
    );
    const made = await episodeWithNoise(1, cover, chapters);
    episode = await fsp.readFile(made.mp3);
    video = await fsp.readFile(made.mp4);
  });
  after(async () => {
    await engine?.dispose();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  /**
   * The episode (speech at -6 dB in pink noise of `seed`, both channels alike) as an MP3 128k CBR with tags,
   * and as an MP4 of a test picture and that audio as AAC 96k; with a cover and chapters when given them.
   */
  async function episodeWithNoise(
    seed: number,
    cover?: string,
    chapters?: string,
  ): Promise<{ mp3: string; mp4: string }> {
    const mp3 = join(dir, `talk-${seed}.mp3`);
    await ffmpeg([
      ...['-i', SPEECH_SAMPLE, '-f', 'lavfi', '-i', `anoisesrc=a=0.003:c=pink:r=44100:d=10.6:seed=${seed}`],
      ...(cover && chapters ? ['-i', cover, '-i', chapters] : []),
      ...[
        '-filter_complex',
        '[0:a]aresample=44100,volume=-6dB[s];[s][1:a]amix=inputs=2:normalize=0,pan=stereo|c0=c0|c1=c0[a]',
      ],
      '-map',
      '[a]',
      ...(cover && chapters
        ? ['-map', '2:v', '-c:v', 'copy', '-disposition:v', 'attached_pic', '-map_chapters', '3']
        : []),
      ...['-c:a', 'libmp3lame', '-b:a', '128k', '-ar', '44100'],
      ...Object.entries(TAGS).flatMap(([key, value]) => ['-metadata', `${key}=${value}`]),
      mp3,
    ]);
    const mp4 = join(dir, `clip-${seed}.mp4`);
    await ffmpeg([
      ...['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10:duration=10.5', '-i', mp3],
      ...['-map', '0:v', '-map', '1:a', '-c:v', 'mpeg4', '-c:a', 'aac', '-b:a', '96k', '-shortest', mp4],
    ]);
    return { mp3, mp4 };
  }

  const fileUrl = (on: TestEngine, uid: string, step?: string) =>
    `${on.url}/v2/medias/${uid}/file${step ? `?step=${encodeURIComponent(step)}` : ''}`;
  const download = (on: TestEngine, uid: string, step?: string, headers: Record<string, string> = {}) =>
    call(fileUrl(on, uid, step), { headers: { 'x-api-key': KEY, ...headers } });

  async function uploaded(on: TestEngine, file: Buffer, name: string, settings: object): Promise<EngineJson> {
    const res = await upload(on, file, name, { media_enhancement: JSON.stringify(settings) });
    assert.equal(res.status, 201, res.text);
    return res.json;
  }

  /** The file of `step` saved, probed and measured. */
  async function fetched(on: TestEngine, uid: string, step: string, name: string) {
    const answer = await download(on, uid, step);
    assert.equal(answer.status, 200, `${step}: ${answer.text.slice(0, 200)}`);
    const path = join(dir, `${uid}-${name}`);
    await fsp.writeFile(path, answer.bytes);
    return { answer, path, probed: await probe(path), measured: await ffmpegLoudness(path) };
  }

  function assertOnTarget(measured: { integratedLufs: number; truePeakDbtp: number }, what: string): void {
    assert.ok(
      Math.abs(measured.integratedLufs - TARGET) <= ON_TARGET_LU,
      `${what}: ffmpeg reads ${measured.integratedLufs} LUFS`,
    );
    assert.ok(
      measured.truePeakDbtp <= CEILING + METER_TOLERANCE_DB,
      `${what}: ffmpeg reads ${measured.truePeakDbtp} dBTP over the ${CEILING} dBTP ceiling`,
    );
  }

  const audioOf = (probed: Probed) => probed.streams.filter((stream) => stream.codec_type === 'audio');
  const tagsOf = (probed: Probed) =>
    Object.fromEntries(Object.entries(probed.format.tags ?? {}).map(([key, value]) => [key.toLowerCase(), value]));

  it('makes a WAV master and a mono MP3 for the feed from one MP3 upload, each on target, the MP3 keeping the tags, cover and chapters', async () => {
    const media = await uploaded(engine, episode, 'talk.mp3', {
      enhancement_model: 'FINCH',
      transcode: 'WAV',
      outputs: [{ name: 'feed', transcode: 'MP3', bitrate_kbps: 96, bitrate_mode: 'CBR', downmix_mono: true }],
    });
    const done = await settled(engine, media.uid, 120_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    const [feedParams] = done.enhancement_params.outputs as AppliedOutput[];
    assert.deepEqual(
      { ...feedParams, output_loudness_lufs: undefined, output_true_peak_dbtp: undefined },
      {
        name: 'feed',
        file_name: 'talk_feed.mp3',
        output_encoding: { codec: 'mp3', bitrate_mode: 'CBR', bitrate_kbps: 96, sample_rate_hz: 44100, channels: 1 },
        output_loudness_lufs: undefined,
        output_true_peak_dbtp: undefined,
        target_reached: true,
      },
    );

    const master = await fetched(engine, media.uid, 'ENHANCED', 'master.wav');
    assert.match(String(master.answer.headers['content-disposition']), /filename="talk_enhanced\.wav"/);
    const [masterAudio] = audioOf(master.probed);
    assert.deepEqual(
      [masterAudio.codec_name, masterAudio.sample_rate, masterAudio.channels],
      ['pcm_s24le', '44100', 2],
    );
    assertOnTarget(master.measured, 'the WAV master');

    const feed = await fetched(engine, media.uid, 'feed', 'feed.mp3');
    assert.equal(feed.answer.headers['content-type'], 'audio/mpeg');
    assert.match(String(feed.answer.headers['content-disposition']), /^attachment; filename="talk_feed\.mp3"/);
    const [feedAudio] = audioOf(feed.probed);
    assert.deepEqual(
      [feedAudio.codec_name, feedAudio.bit_rate, feedAudio.sample_rate, feedAudio.channels],
      ['mp3', '96000', '44100', 1],
    );
    assertOnTarget(feed.measured, 'the MP3 feed');
    assert.ok(
      Math.abs(feed.measured.integratedLufs - feedParams.output_loudness_lufs) <= 0.2,
      `reported ${feedParams.output_loudness_lufs}, ffmpeg reads ${feed.measured.integratedLufs}`,
    );
    for (const [key, value] of Object.entries(TAGS)) assert.equal(tagsOf(feed.probed)[key], value, key);
    assert.ok(
      feed.probed.streams.some((stream) => stream.codec_type === 'video' && stream.disposition?.attached_pic === 1),
      'the cover is kept',
    );
    assert.deepEqual(
      feed.probed.chapters.map((chapter) => chapter.tags?.title),
      ['Hello', 'Talk'],
    );

    // A Range request resumes it, as for ENHANCED; the stored file is the media owner's alone.
    const tail = await download(engine, media.uid, 'feed', { range: 'bytes=100-' });
    assert.equal(tail.status, 206);
    assert.ok(tail.bytes.equals(feed.answer.bytes.subarray(100)));
    const stat = await fsp.stat(join(engine.dataDir, 'media', media.uid, 'output-feed'));
    assert.equal(stat.mode & 0o777, 0o600);
  });

  it("takes a video's soundtrack alone into an audio file of its codec (AAC in M4A), on target", async () => {
    const media = await uploaded(engine, video, 'clip.mp4', {
      enhancement_model: 'FINCH',
      outputs: [{ name: 'soundtrack' }, { name: 'soundtrack-mp3', transcode: 'MP3', bitrate_kbps: 128 }],
    });
    const done = await settled(engine, media.uid, 120_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    const soundtrack = await fetched(engine, media.uid, 'soundtrack', 'soundtrack.m4a');
    assert.equal(soundtrack.answer.headers['content-type'], 'audio/mp4');
    assert.match(String(soundtrack.answer.headers['content-disposition']), /filename="clip_soundtrack\.m4a"/);
    // The soundtrack alone, its picture left out (an M4A's chapters read as a data track).
    assert.deepEqual(
      soundtrack.probed.streams
        .filter((stream) => stream.codec_type !== 'data')
        .map((s) => [s.codec_type, s.codec_name]),
      [['audio', 'aac']],
    );
    assert.deepEqual(
      soundtrack.probed.chapters.map((chapter) => chapter.tags?.title),
      ['Hello', 'Talk'],
      "the video's chapters",
    );
    assert.equal(soundtrack.probed.streams[0].channels, 2);
    assertOnTarget(soundtrack.measured, 'the soundtrack');
    const mp3 = await fetched(engine, media.uid, 'soundtrack-mp3', 'soundtrack.mp3');
    assert.deepEqual(
      mp3.probed.streams.map((stream) => [stream.codec_type, stream.codec_name, stream.bit_rate]),
      [['audio', 'mp3', '128000']],
      'no picture taken for a cover',
    );
    assertOnTarget(mp3.measured, 'the soundtrack as MP3');
    // The v1 video operation takes the same list in video_enhancement.
    const res = await upload(
      engine,
      video,
      'clip.mp4',
      { video_enhancement: JSON.stringify({ enhancement_model: 'LOUDNESS_ONLY', outputs: [{ name: 'soundtrack' }] }) },
      '/v1/videos',
    );
    assert.equal(res.status, 201, res.text);
    assert.equal((await settled(engine, res.json.uid, 60_000)).enhancement_status, 'COMPLETED');
    const v1 = await fetched(engine, res.json.uid, 'soundtrack', 'v1-soundtrack.m4a');
    assert.equal(audioOf(v1.probed)[0].codec_name, 'aac');
    assertOnTarget(v1.measured, 'the soundtrack of a v1 video');
    const enhanced = await fetched(engine, media.uid, 'ENHANCED', 'enhanced.mp4');
    assert.deepEqual(
      enhanced.probed.streams.filter((stream) => stream.codec_type !== 'data').map((stream) => stream.codec_type),
      ['video', 'audio'],
      'the ENHANCED video as ever',
    );
  });

  // The noise decides where the encoders' peaks land: with seed 7 the soundtrack's AAC encoder (its default
  // coder) wrote a spike 2.2 dB over a lowered ceiling, and the soundtrack was turned down to -18.4 LUFS.
  for (const seed of [1, 7, 2, 5])
    it(`puts every output on target under the ceiling whatever the noise (seed ${seed}): a WAV master and a mono MP3 feed, a video and its soundtrack alone`, async () => {
      const { mp3, mp4 } = await episodeWithNoise(seed);
      const episodeJob = await uploaded(engine, await fsp.readFile(mp3), 'talk.mp3', {
        enhancement_model: 'FINCH',
        transcode: 'WAV',
        outputs: [{ name: 'feed', transcode: 'MP3', bitrate_kbps: 96, bitrate_mode: 'CBR', downmix_mono: true }],
      });
      const res = await upload(
        engine,
        await fsp.readFile(mp4),
        'clip.mp4',
        {
          video_enhancement: JSON.stringify({ enhancement_model: 'LOUDNESS_ONLY', outputs: [{ name: 'soundtrack' }] }),
        },
        '/v1/videos',
      );
      assert.equal(res.status, 201, res.text);
      for (const [uid, steps] of [
        [episodeJob.uid, ['ENHANCED', 'feed']],
        [res.json.uid, ['ENHANCED', 'soundtrack']],
      ] as [string, string[]][]) {
        const done = await settled(engine, uid, 120_000);
        assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
        for (const step of steps) {
          const { measured } = await fetched(engine, uid, step, `seed-${seed}-${step}`);
          assertOnTarget(measured, `seed ${seed}, ${step} of ${uid === episodeJob.uid ? 'the episode' : 'the video'}`);
        }
        for (const output of done.enhancement_params.outputs as AppliedOutput[])
          assert.equal(output.target_reached, true, `seed ${seed}: ${output.name} says its target was not reached`);
      }
    });

  it("names an output's work files apart from the job's own: outputs named processed (WAV) and feed (MP3) of an MP3 job", async () => {
    // `processed`, like `trimmed` or `decoded`, is also the name of one of the job's own work files.
    const media = await uploaded(engine, episode, 'talk.mp3', {
      enhancement_model: 'LOUDNESS_ONLY',
      outputs: [
        { name: 'processed', transcode: 'WAV' },
        { name: 'feed', transcode: 'MP3' },
      ],
    });
    const done = await settled(engine, media.uid, 120_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    const processed = await fetched(engine, media.uid, 'processed', 'processed.wav');
    assert.equal(audioOf(processed.probed)[0].codec_name.startsWith('pcm_'), true);
    assertOnTarget(processed.measured, 'the processed WAV');
    const feed = await fetched(engine, media.uid, 'feed', 'feed-after-processed.mp3');
    assert.equal(audioOf(feed.probed)[0].codec_name, 'mp3');
    assertOnTarget(feed.measured, 'the MP3 feed');
    assertOnTarget((await fetched(engine, media.uid, 'ENHANCED', 'main.mp3')).measured, 'the ENHANCED MP3');
  });

  it("takes a video's E-AC-3 soundtrack alone into an M4A as AAC (an M4A cannot hold E-AC-3), on target", async () => {
    const mp4 = join(dir, 'eac3.mp4');
    await ffmpeg([
      ...['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10:duration=6', '-i', SPEECH_SAMPLE],
      ...['-map', '0:v', '-map', '1:a', '-c:v', 'mpeg4', '-c:a', 'eac3', '-b:a', '192k', '-ac', '2', '-ar', '48000'],
      ...['-shortest', mp4],
    ]);
    const media = await uploaded(engine, await fsp.readFile(mp4), 'eac3.mp4', {
      enhancement_model: 'LOUDNESS_ONLY',
      outputs: [{ name: 'soundtrack' }],
    });
    const done = await settled(engine, media.uid, 120_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    assert.equal((done.enhancement_params.outputs as AppliedOutput[])[0].file_name, 'eac3_soundtrack.m4a');
    const soundtrack = await fetched(engine, media.uid, 'soundtrack', 'eac3-soundtrack.m4a');
    assert.equal(soundtrack.answer.headers['content-type'], 'audio/mp4');
    // An M4A cannot hold E-AC-3: the soundtrack is encoded as AAC.
    assert.deepEqual(
      audioOf(soundtrack.probed).map((stream) => [stream.codec_name, stream.channels]),
      [['aac', 2]],
    );
    assert.ok(Number(soundtrack.probed.format.duration) > 5, `lasts ${soundtrack.probed.format.duration} s`);
    assertOnTarget(soundtrack.measured, 'the E-AC-3 soundtrack');
  });

  it('answers a named step 412 before COMPLETED, 404 for a name the media lacks (naming its outputs), 422 when malformed', async () => {
    const slow = await startTestEngine({ processingDelayMs: 60_000 });
    try {
      const media = await uploaded(slow, episode, 'talk.mp3', {
        enhancement_model: 'FINCH',
        outputs: [{ name: 'master', transcode: 'WAV' }, { name: 'feed' }],
      });
      assert.deepEqual(media.enhancement_params.outputs, [{ name: 'master', transcode: 'WAV' }, { name: 'feed' }]);
      const early = await download(slow, media.uid, 'feed');
      assert.equal(early.status, 412, early.text);
      assert.match(
        early.json.detail as string,
        /the output "feed" of media .* is not available: it is (PENDING|PROCESSING)/,
      );
      const unknown = await download(slow, media.uid, 'teaser');
      assert.equal(unknown.status, 404, unknown.text);
      assert.match(unknown.json.detail as string, /no output "teaser".*its outputs: "master", "feed"/);
      for (const step of ['Feed', 'enhanced', 'a'.repeat(33), 'x/../y']) {
        const bad = await download(slow, media.uid, step);
        assert.equal(bad.status, 422, `${step}: ${bad.text}`);
        assert.deepEqual(issues(bad.json)[0].loc, ['query', 'step']);
      }
      const plain = await uploaded(slow, episode, 'plain.mp3', { enhancement_model: 'FINCH' });
      const none = await download(slow, plain.uid, 'feed');
      assert.equal(none.status, 404);
      assert.match(none.json.detail as string, /its outputs: none beyond ENHANCED/);
    } finally {
      await slow.dispose();
    }
  });

  it('fails a video without a soundtrack that is asked for outputs (NO_AUDIO), rather than completing without them', async () => {
    const silent = join(dir, 'silent.mp4');
    await ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10:duration=1', '-c:v', 'mpeg4', silent]);
    const media = await uploaded(engine, await fsp.readFile(silent), 'silent.mp4', {
      outputs: [{ name: 'soundtrack' }],
    });
    const done = await settled(engine, media.uid, 60_000);
    assert.equal(done.enhancement_status, 'FAILED');
    assert.equal(done.error?.code, 'NO_AUDIO');
    assert.match(done.error.message, /no audio stream, so there is no sound to make "soundtrack" of/);
  });

  it('needs ffmpeg for an MP3 output of a WAV kept as WAV, and says so before any work', async () => {
    const without = await startTestEngine({ ffmpegPath: join(dir, 'no-ffmpeg-here') });
    try {
      const wav = join(dir, 'needs-ffmpeg.wav');
      await ffmpeg(['-i', SPEECH_SAMPLE, wav]);
      const media = await uploaded(without, await fsp.readFile(wav), 'talk.wav', {
        outputs: [{ name: 'feed', transcode: 'MP3' }],
      });
      const done = await settled(without, media.uid, 30_000);
      assert.equal(done.enhancement_status, 'FAILED');
      assert.equal(done.error?.code, 'FFMPEG_REQUIRED');
      assert.match(done.error.message, /^encoding to MP3 needs ffmpeg/);
    } finally {
      await without.dispose();
    }
  });

  it('fails a media asking for outputs when its processor makes none, naming them', async () => {
    const copying = await startTestEngine({
      processorModule: join(__dirname, '..', '..', 'src', 'engine', 'processors', 'copy-processor.js'),
    });
    try {
      const media = await uploaded(copying, episode, 'talk.mp3', { outputs: [{ name: 'feed' }, { name: 'master' }] });
      const done = await settled(copying, media.uid, 30_000);
      assert.equal(done.enhancement_status, 'FAILED');
      assert.equal(done.error?.code, 'PROCESSING_FAILED');
      assert.match(done.error.message, /the processor made no output "feed", "master"/);
    } finally {
      await copying.dispose();
    }
  });

  it("counts each download of an output once against the download limit's window, like ENHANCED", async () => {
    const limited = await startTestEngine({ limits: { downloadFile: 3 }, windowMs: 60_000 });
    try {
      const wav = join(dir, 'limited.wav');
      await ffmpeg(['-i', SPEECH_SAMPLE, wav]);
      const media = await uploaded(limited, await fsp.readFile(wav), 'limited.wav', {
        enhancement_model: 'LOUDNESS_ONLY',
        outputs: [{ name: 'master' }],
      });
      assert.equal((await settled(limited, media.uid, 60_000)).enhancement_status, 'COMPLETED');
      const answers = [
        await download(limited, media.uid, 'ENHANCED'),
        await download(limited, media.uid, 'master'),
        await download(limited, media.uid, 'master', { range: 'bytes=0-99' }),
        await download(limited, media.uid, 'master'),
      ];
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [200, 200, 206, 429],
      );
    } finally {
      await limited.dispose();
    }
  });

  it('refuses bad outputs with a 422 naming the loc, the value and the rule', async () => {
    const cases: [object, (string | number)[], RegExp][] = [
      [{ outputs: [] }, ['body', 'media_enhancement', 'outputs'], /from 1 to 4 items/],
      [
        { outputs: [{ name: 'feed' }, { name: 'feed' }] },
        ['body', 'media_enhancement', 'outputs', 1, 'name'],
        /earlier output has this name/,
      ],
      [{ outputs: [{ name: 'Feed!' }] }, ['body', 'media_enhancement', 'outputs', 0, 'name'], /does not match regex/],
      [{ outputs: [{ name: 'pre' }] }, ['body', 'media_enhancement', 'outputs', 0, 'name'], /interface's PRE step/],
      [{ outputs: [{ transcode: 'MP3' }] }, ['body', 'media_enhancement', 'outputs', 0, 'name'], /field required/],
      [
        { outputs: [{ name: 'feed', transcode: 'OGG' }] },
        ['body', 'media_enhancement', 'outputs', 0, 'transcode'],
        /permitted: 'MP3', 'WAV'/,
      ],
      [
        { outputs: [{ name: 'feed', bitrate_kbps: 32 }] },
        ['body', 'media_enhancement', 'outputs', 0, 'bitrate_kbps'],
        /greater than or equal to 64/,
      ],
      [
        { outputs: [{ name: 'master', transcode: 'WAV', downmix_mono: true }] },
        ['body', 'media_enhancement', 'outputs', 0, 'downmix_mono'],
        /lossy output only/,
      ],
      [
        { outputs: [{ name: 'feed', speed: 2 }] },
        ['body', 'media_enhancement', 'outputs', 0, 'speed'],
        /extra fields not permitted/,
      ],
    ];
    for (const [settings, loc, rule] of cases) {
      const res = await upload(engine, episode, 'talk.mp3', { media_enhancement: JSON.stringify(settings) });
      assert.equal(res.status, 422, `${JSON.stringify(settings)}: ${res.text}`);
      const [issue] = issues(res.json);
      assert.deepEqual(issue.loc, loc, JSON.stringify(settings));
      assert.match(issue.msg, rule);
    }
    // A WAV input kept as it is stays lossless: an output without transcode takes no encoding.
    const wav = join(dir, 'talk.wav');
    await ffmpeg(['-i', SPEECH_SAMPLE, wav]);
    const lossless = await upload(engine, await fsp.readFile(wav), 'talk.wav', {
      media_enhancement: JSON.stringify({ outputs: [{ name: 'copy', bitrate_kbps: 128 }] }),
    });
    assert.equal(lossless.status, 422, lossless.text);
    assert.deepEqual(issues(lossless.json)[0].loc, ['body', 'media_enhancement', 'outputs', 0, 'bitrate_kbps']);
    assert.match(issues(lossless.json)[0].msg, /the input is WAV, kept as it is/);
    // In video_enhancement too (v1 video), by its own loc.
    const v1 = await upload(
      engine,
      video,
      'clip.mp4',
      { video_enhancement: JSON.stringify({ outputs: [{ name: 'x', colour: 1 }] }) },
      '/v1/videos',
    );
    assert.equal(v1.status, 422, v1.text);
    assert.deepEqual(issues(v1.json)[0].loc, ['body', 'video_enhancement', 'outputs', 0, 'colour']);
  });

  it('still delivers every output after a restart in the middle of the job; a partial file left behind is never served', async () => {
    const first = await startTestEngine({ workers: 1 });
    const media = await uploaded(first, episode, 'talk.mp3', {
      enhancement_model: 'FINCH',
      outputs: [
        { name: 'master', transcode: 'WAV' },
        { name: 'feed', bitrate_kbps: 64 },
      ],
    });
    // Stopped once the work is under way (its progress told), not before.
    const end = Date.now() + 60_000;
    for (;;) {
      const { json } = await metadata(first, media.uid);
      assert.equal(json.enhancement_status === 'COMPLETED', false, 'the job ended before the engine could stop it');
      if ((json.progress as { percent?: number } | undefined)?.percent) break;
      assert.ok(Date.now() < end, 'no progress');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await first.close();
    const folder = join(first.dataDir, 'media', media.uid);
    await fsp.writeFile(join(folder, 'output-feed'), 'half an mp3');
    const second = await startTestEngine({}, first.dataDir);
    try {
      const early = await download(second, media.uid, 'feed');
      assert.ok(early.status === 412 || early.status === 200, early.text);
      const done = await settled(second, media.uid, 120_000);
      assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
      assert.deepEqual(
        (done.enhancement_params.outputs as AppliedOutput[]).map((output) => output.file_name),
        ['talk_master.wav', 'talk_feed.mp3'],
      );
      const master = await fetched(second, media.uid, 'master', 'restart-master.wav');
      assert.equal(audioOf(master.probed)[0].codec_name, 'pcm_s24le');
      assertOnTarget(master.measured, 'the master after a restart');
      const feed = await fetched(second, media.uid, 'feed', 'restart-feed.mp3');
      assert.deepEqual([audioOf(feed.probed)[0].codec_name, audioOf(feed.probed)[0].bit_rate], ['mp3', '64000']);
      assertOnTarget(feed.measured, 'the feed after a restart');
      const enhanced = await fetched(second, media.uid, 'ENHANCED', 'restart-enhanced.mp3');
      assertOnTarget(enhanced.measured, 'ENHANCED after a restart');
      for (const name of ['output', 'output-master', 'output-feed'])
        assert.equal((await fsp.stat(join(folder, name))).mode & 0o777, 0o600, name);
    } finally {
      await second.dispose();
    }
  });
});
