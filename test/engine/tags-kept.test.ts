// Tags, cover art and chapters survive processing: each container made with them by ffmpeg, enhanced,
// and read back with ffprobe (WAV: its LIST/INFO, bext and iXML chunks, byte for byte).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { speechLike, writeWavFile } from '../fixtures/audio';
import { ffmpeg, probe, type Probed } from '../fixtures/ffmpeg';
import { call, KEY, settled, startTestEngine, upload, type TestEngine } from './helpers';

const TAGS = { title: 'Episode 12', artist: 'The Hosts', album: 'The Show', comment: 'recorded at home' };
const CHAPTERS = [
  { title: 'Intro', start: 0, end: 1.5 },
  { title: 'Talk', start: 1.5, end: 3 },
];

describe('engine: tags, cover art and chapters survive', function () {
  this.timeout(120_000);
  let engine: TestEngine;
  let dir: string;
  let speechWav: string;
  let cover: string;
  let chapters: string;

  before(async () => {
    engine = await startTestEngine({ limits: { uploadMedia: null } });
    dir = await mkdtemp(join(tmpdir(), 'engine-tags-'));
    speechWav = join(dir, 'speech.wav');
    await writeWavFile(speechWav, { sampleRate: 44_100, channels: 2, bits: 16 }, 3, speechLike(44_100, 2, 5, -30));
    cover = join(dir, 'cover.png');
    await ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x64:duration=0.1', '-frames:v', '1', cover]);
    chapters = join(dir, 'chapters.txt');
    await writeFile(
      chapters,
      `;FFMETADATA1\n${CHAPTERS.map((c) => `[CHAPTER]\nTIMEBASE=1/1000\nSTART=${c.start * 1000}\nEND=${c.end * 1000}\ntitle=${c.title}\n`).join('')}`,
    );
  });
  after(async () => {
    await engine.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const metadataArgs = Object.entries(TAGS).flatMap(([key, value]) => ['-metadata', `${key}=${value}`]);

  /** `speechWav` as `name`, with the tags, and the cover and chapters when asked. */
  async function tagged(name: string, codec: string[], extras: { cover: boolean; chapters: boolean }) {
    const path = join(dir, name);
    await ffmpeg([
      ...['-i', speechWav, ...(extras.cover ? ['-i', cover] : []), ...(extras.chapters ? ['-i', chapters] : [])],
      ...['-map', '0:a', ...(extras.cover ? ['-map', '1:v', '-c:v', 'copy', '-disposition:v', 'attached_pic'] : [])],
      ...(extras.chapters ? ['-map_chapters', extras.cover ? '2' : '1'] : []),
      ...codec,
      ...metadataArgs,
      path,
    ]);
    return path;
  }

  async function enhanced(file: string, name: string, settings: object = {}): Promise<string> {
    const res = await upload(engine, await readFile(file), name, {
      media_enhancement: JSON.stringify({ enhancement_model: 'FINCH', ...settings }),
    });
    assert.equal(res.status, 201, res.text);
    const done = await settled(engine, res.json.uid, 60_000);
    assert.equal(done.enhancement_status, 'COMPLETED', JSON.stringify(done.error));
    const download = await call(`${engine.url}/v2/medias/${res.json.uid}/file`, { headers: { 'x-api-key': KEY } });
    const out = join(dir, `out-${res.json.uid}-${name}`);
    await writeFile(out, download.bytes);
    return out;
  }

  /** Every tag of the file and of its audio stream (Ogg keeps them on the stream), keys in lower case. */
  function tagsOf(probed: Probed): Record<string, string> {
    const audio = probed.streams.find((s) => s.codec_type === 'audio');
    const all = { ...probed.format.tags, ...audio?.tags };
    return Object.fromEntries(Object.entries(all).map(([key, value]) => [key.toLowerCase(), value]));
  }

  function assertTags(probed: Probed) {
    const tags = tagsOf(probed);
    for (const [key, value] of Object.entries(TAGS)) assert.equal(tags[key], value, `tag ${key}`);
  }

  function assertCover(probed: Probed) {
    const pictures = probed.streams.filter((s) => s.disposition?.attached_pic === 1);
    assert.equal(pictures.length, 1, 'one attached picture');
    assert.equal(pictures[0].codec_name, 'png');
  }

  function assertChapters(probed: Probed) {
    assert.deepEqual(
      probed.chapters.map((c) => c.tags?.title),
      CHAPTERS.map((c) => c.title),
    );
    for (const [i, chapter] of probed.chapters.entries())
      assert.ok(Math.abs(Number(chapter.start_time) - CHAPTERS[i].start) < 0.05, `chapter ${i} starts in place`);
  }

  for (const [ext, codec, extras] of [
    ['mp3', ['-c:a', 'libmp3lame', '-b:a', '128k'], { cover: true, chapters: true }],
    ['m4a', ['-c:a', 'aac', '-b:a', '96k'], { cover: true, chapters: true }],
    // ffmpeg 5.1 writes no chapters into FLAC or Ogg, and no picture into Ogg: what it can write is checked.
    ['flac', ['-c:a', 'flac'], { cover: true, chapters: false }],
    ['ogg', ['-c:a', 'libvorbis'], { cover: false, chapters: false }],
  ] as const) {
    it(`${ext.toUpperCase()}: every tag${extras.cover ? ', the cover' : ''}${extras.chapters ? ' and the chapters' : ''}`, async () => {
      const input = await tagged(`tagged.${ext}`, [...codec], extras);
      const before = await probe(input);
      assertTags(before);
      if (extras.cover) assertCover(before);
      if (extras.chapters) assertChapters(before);
      const after = await probe(await enhanced(input, `tagged.${ext}`));
      assertTags(after);
      if (extras.cover) assertCover(after);
      if (extras.chapters) assertChapters(after);
    });
  }

  it('an M4A transcoded to MP3 keeps its tags and cover', async () => {
    const input = await tagged('to-mp3.m4a', ['-c:a', 'aac', '-b:a', '96k'], { cover: true, chapters: false });
    const after = await probe(await enhanced(input, 'to-mp3.m4a', { transcode: 'MP3' }));
    assert.equal(after.streams.find((s) => s.codec_type === 'audio')?.codec_name, 'mp3');
    assertTags(after);
    assertCover(after);
  });

  it('a video keeps every other stream, its tags and its chapters', async () => {
    const input = join(dir, 'film.mkv');
    await ffmpeg([
      ...['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10:duration=3', '-i', speechWav, '-i', chapters],
      ...['-f', 'lavfi', '-i', 'sine=frequency=300:duration=3'],
      ...['-map', '0:v', '-map', '1:a', '-map', '3:a', '-map_chapters', '2'],
      ...['-c:v', 'mpeg4', '-c:a', 'libvorbis', ...metadataArgs],
      ...['-metadata:s:a:0', 'language=eng', '-metadata:s:a:1', 'language=fra', '-metadata:s:a:1', 'title=commentary'],
      input,
    ]);
    const after = await probe(await enhanced(input, 'film.mkv'));
    assert.deepEqual(
      after.streams.map((s) => s.codec_type),
      ['video', 'audio', 'audio'],
    );
    const [, first, second] = after.streams;
    assert.equal(first.tags?.language, 'eng');
    assert.equal(second.tags?.language, 'fra');
    assert.equal(second.tags?.title, 'commentary');
    const tags = Object.fromEntries(Object.entries(after.format.tags ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    for (const [key, value] of Object.entries(TAGS)) assert.equal(tags[key], value, `tag ${key}`);
    assertChapters(after);
  });

  it('a WAV keeps its LIST/INFO, bext and iXML chunks byte for byte', async () => {
    const input = join(dir, 'broadcast.wav');
    // ffmpeg writes LIST/INFO from the tags and bext with -write_bext; the iXML chunk is added by hand.
    await ffmpeg([
      ...['-i', speechWav, '-c:a', 'pcm_s16le', ...metadataArgs, '-write_bext', '1'],
      ...['-metadata', 'originator=Field Recorder', '-metadata', 'coding_history=A=PCM,F=44100,W=16,M=stereo'],
      input,
    ]);
    const ixml = Buffer.from('<?xml version="1.0"?><BWFXML><PROJECT>The Show</PROJECT></BWFXML>', 'utf8');
    const wav = await readFile(input);
    const chunk = Buffer.alloc(8 + ixml.length + (ixml.length % 2));
    chunk.write('iXML', 0, 'latin1');
    chunk.writeUInt32LE(ixml.length, 4);
    ixml.copy(chunk, 8);
    const withIxml = Buffer.concat([wav, chunk]);
    withIxml.writeUInt32LE(withIxml.length - 8, 4);
    await writeFile(input, withIxml);
    const out = await enhanced(input, 'broadcast.wav');
    const before = chunksOf(withIxml);
    const after = chunksOf(await readFile(out));
    for (const id of ['LIST', 'bext', 'iXML']) {
      assert.ok(before.has(id), `the input has ${id}`);
      assert.deepEqual(after.get(id), before.get(id), `${id} kept byte for byte`);
    }
    const probed = await probe(out);
    assertTags(probed);
    // ffmpeg reads bext's originator as `encoded_by`: read from the chunk after the audio, as a player reads it.
    assert.equal(probed.format.tags?.encoded_by, 'Field Recorder');
  });
});

/** A RIFF WAVE file's chunks by id (the first of each). */
function chunksOf(wav: Buffer): Map<string, Buffer> {
  const chunks = new Map<string, Buffer>();
  for (let at = 12; at + 8 <= wav.length;) {
    const id = wav.toString('latin1', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    if (!chunks.has(id)) chunks.set(id, wav.subarray(at + 8, at + 8 + size));
    at += 8 + size + (size % 2);
  }
  return chunks;
}
