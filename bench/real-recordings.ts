// Real recordings for the denoiser benchmark, made at run time (none of the speech is in the repository):
//   - clean speech that Debian ships: asterisk-core-sounds-en-g722 (one professional speaker, 16 kHz G.722,
//     CC BY-SA 3.0) and codec2-examples (several speakers, 8 and 16 kHz, LGPL-2.1), fetched with
//     `apt-get download` into a cache folder and unpacked with `dpkg -x` (nothing is installed);
//   - babble: eight other prompts of both packages spoken at once;
//   - recorded room noise (freesound.org 573577, CC0), carried in bench/media/.
// Everything is decoded and resampled by ffmpeg to 48 kHz mono float, the rate the chain's models run at.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ffmpeg } from '../test/fixtures/ffmpeg';
import { activeRms } from '../test/enhance/test-media';
import { RATE, readMono } from './quality-media';

const run = promisify(execFile);

export const ROOM_NOISE = join(__dirname, '..', '..', 'bench', 'media', 'room-noise-freesound-573577.wav');
/** Where the packages are unpacked; kept between runs (delete it to fetch again). */
export const DEBIAN_CACHE = join(tmpdir(), 'media-enhance-bench-debian-speech');

export const ASTERISK = { package: 'asterisk-core-sounds-en-g722', dir: 'usr/share/asterisk/sounds/en_US_f_Allison' };
const CODEC2 = { package: 'codec2-examples', dir: 'usr/share/codec2' };
/** Each clip is 4.9-5 s: a few seconds, and one DNSMOS window (dnsmos_local.py doubles a clip under 9.01 s
 * and slides 9.01 s windows over it every second: 4.51-5 s doubled gives exactly one). */
const CLIP_SECONDS = 5;
/** Decoding options for codec2's headerless files (16-bit little-endian, 8 kHz mono). */
const RAW_8K = ['-f', 's16le', '-ar', '8000', '-ac', '1'];

interface Recording {
  source: typeof ASTERISK;
  file: string;
  /** Where the clip starts in the recording (s). */
  start?: number;
  /** ffmpeg's options for reading a file without a header. */
  format?: string[];
}

/** The clean clips: three prompts of the asterisk speaker, three of codec2's examples (one at 8 kHz). */
const CLIPS: Array<Recording & { name: string }> = [
  { name: 'asterisk vm-intro', source: ASTERISK, file: 'vm-intro.g722' },
  { name: 'asterisk agent-incorrect', source: ASTERISK, file: 'agent-incorrect.g722' },
  { name: 'asterisk ss-noservice', source: ASTERISK, file: 'ss-noservice.g722' },
  { name: 'codec2 speech_orig_16k, 0-5 s', source: CODEC2, file: 'raw/speech_orig_16k.wav' },
  { name: 'codec2 speech_orig_16k, 5-10 s', source: CODEC2, file: 'raw/speech_orig_16k.wav', start: 5 },
  { name: 'codec2 kristoff (8 kHz)', source: CODEC2, file: 'raw/kristoff.raw', format: RAW_8K },
];

/** The babble's talkers: none of them is a clip. */
const BABBLE: Recording[] = [
  { source: ASTERISK, file: 'demo-thanks.g722' },
  { source: ASTERISK, file: 'vm-forwardoptions.g722' },
  { source: CODEC2, file: 'wav/hts2a.wav' },
  { source: CODEC2, file: 'wav/morig.wav' },
  { source: CODEC2, file: 'wav/forig.wav' },
  { source: CODEC2, file: 'wav/cross.wav' },
  { source: CODEC2, file: 'wav/mmt1.wav' },
  { source: CODEC2, file: 'wav/hts1a.wav' },
];

export interface RealRecordings {
  clips: Array<{ name: string; samples: Float32Array }>;
  /** Several seconds of eight talkers at once, each at the same active level. */
  babble: Float32Array;
  room: Float32Array;
}

/** The clips, babble and room noise at 48 kHz; `dir` holds the decoded files. */
export async function realRecordings(dir: string): Promise<RealRecordings> {
  const roots = new Map<string, string>();
  for (const source of [ASTERISK, CODEC2]) roots.set(source.package, await unpacked(source.package));
  const decode = async ({ source, file, start = 0, format = [] }: Recording, seconds?: number) => {
    const output = join(dir, `${source.package}-${file.replace(/\W/g, '_')}-${start}.wav`);
    const limit = seconds ? ['-t', String(seconds)] : [];
    const input = join(roots.get(source.package)!, source.dir, file);
    await ffmpeg([
      '-ss',
      String(start),
      ...format,
      '-i',
      input,
      ...limit,
      '-ac',
      '1',
      '-ar',
      String(RATE),
      '-c:a',
      'pcm_f32le',
      output,
    ]);
    return readMono(output);
  };
  const clips = [];
  for (const clip of CLIPS) clips.push({ name: clip.name, samples: await decode(clip, CLIP_SECONDS) });
  const talkers = [];
  for (const talker of BABBLE) talkers.push(await decode(talker));
  return { clips, babble: babble(talkers, 8 * RATE), room: await readMono(ROOM_NOISE) };
}

/** The talkers summed at one active level, each repeated to `length` and starting a different way in. */
export function babble(talkers: Float32Array[], length: number): Float32Array {
  const out = new Float32Array(length);
  talkers.forEach((talker, t) => {
    const gain = 0.1 / activeRms(talker);
    const start = Math.floor((t * talker.length) / talkers.length);
    for (let i = 0; i < length; i++) out[i] += gain * talker[(start + i) % talker.length];
  });
  return out;
}

/** `length` samples of `noise` from `offset` on, wrapping round: a short recording serves a longer clip. */
export function loop(noise: Float32Array, length: number, offset: number): Float32Array {
  return Float32Array.from({ length }, (_, i) => noise[(offset + i) % noise.length]);
}

/** The folder a Debian package is unpacked in: fetched (not installed) on first use. */
export async function unpacked(name: string): Promise<string> {
  const root = join(DEBIAN_CACHE, name);
  if (existsSync(join(root, '.complete'))) return root;
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  try {
    await run('apt-get', ['download', name], { cwd: root });
  } catch (err) {
    throw new Error(
      `the benchmark's speech comes from the Debian package ${name}, and \`apt-get download ${name}\` failed: ${(err as Error).message.trim()}`,
      { cause: err },
    );
  }
  const deb = (await readdir(root)).find((file) => file.endsWith('.deb'));
  if (!deb) throw new Error(`apt-get download ${name} left no .deb in ${root}`);
  await run('dpkg', ['-x', deb, '.'], { cwd: root });
  await rm(join(root, deb));
  await writeFile(join(root, '.complete'), '');
  return root;
}
