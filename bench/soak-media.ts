// The soak's media: small WAVs (1-3 s) whose content differs from each other's (speech-like signals from
// their own seed, chords of their own notes, speech in noise), each of its own length, so that every
// output can be matched to its input by its bytes (the original) and its frame count (the enhanced).
// They are made outside the inbox and dropped in by a rename, as a finished copy arrives.
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { encodeWav, sine, speechLike } from '../test/fixtures/audio';

export interface SoakInput {
  name: string;
  /** Where it waits to be dropped. */
  staged: string;
  sha256: string;
  frames: number;
  sampleRate: number;
  channels: number;
  kind: 'speech' | 'chord' | 'speech in noise';
}

const RATES = [16_000, 22_050, 32_000, 44_100, 48_000];

function signal(
  kind: SoakInput['kind'],
  index: number,
  sampleRate: number,
  channels: number,
  frames: number,
): Float32Array[] {
  if (kind === 'chord') {
    // Two notes of their own per input, 5 Hz apart from the next input's.
    const root = 180 + 5 * index;
    const a = sine(sampleRate, root, -18, frames / sampleRate);
    const b = sine(sampleRate, root * 1.5, -24, frames / sampleRate, 30 * index);
    const mono = a.map((x, i) => x + b[i]);
    return Array.from({ length: channels }, (_, c) => (c === 0 ? mono : mono.map((x) => x * 0.8)));
  }
  const speech = speechLike(sampleRate, channels, 1000 + index, -20 - (index % 7))(frames);
  if (kind === 'speech') return speech;
  let state = (index * 2654435761) >>> 0 || 1;
  const noise = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return ((state >>> 0) / 0xffffffff - 0.5) * 0.02; // about -45 dBFS RMS
  };
  return speech.map((channel) => channel.map((x) => x + noise()));
}

/** Makes `count` inputs in `staging`, named take-001.wav and so on. */
export async function makeInputs(count: number, staging: string): Promise<SoakInput[]> {
  await fsp.mkdir(staging, { recursive: true });
  const inputs: SoakInput[] = [];
  for (let i = 0; i < count; i++) {
    const kinds: SoakInput['kind'][] = ['speech', 'chord', 'speech in noise'];
    const kind = kinds[i % 3];
    const sampleRate = RATES[i % RATES.length];
    const channels = i % 4 === 3 ? 2 : 1;
    // Lengths from 1 s to 3 s, a different number of frames for each input.
    const frames = Math.round(sampleRate * (1 + (2 * i) / count)) + i;
    const wav = encodeWav({ sampleRate, channels, bits: 16 }, signal(kind, i, sampleRate, channels, frames));
    const name = `take-${String(i + 1).padStart(3, '0')}.wav`;
    const staged = join(staging, name);
    await fsp.writeFile(staged, wav);
    inputs.push({
      name,
      staged,
      sha256: createHash('sha256').update(wav).digest('hex'),
      frames,
      sampleRate,
      channels,
      kind,
    });
  }
  return inputs;
}

/** Drops a staged input into the inbox whole (a rename on the same file system). */
export async function dropInput(input: SoakInput, inbox: string): Promise<void> {
  await fsp.rename(input.staged, join(inbox, input.name));
}
