// Pauses trimmed (the trim-pauses extension): a recording made here with known pauses (real speech, the
// shipped sample, four times with 0.8, 3 and 5 s of room noise between) through FINCH with
// trim_pauses_s 1.5: the long pauses come out 1.5 s long, the short one untouched, the speech itself the
// same samples as without the trim, the report saying how much was cut, and an MP3's chapters moved with
// the cuts (read back with ffprobe).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processMedia } from '../../src/engine/processors/enhance-processor';
import type { ProcessSettings } from '../../src/engine/processors/processor';
import type { MediaType } from '../../src/engine/storage/media-type';
import { encodeWav } from '../fixtures/audio';
import { ffmpeg, probe } from '../fixtures/ffmpeg';
import { readSpeechSample, seededNoise } from '../enhance/speech-sample';
import { readWav } from '../enhance/test-media';

const WAV: MediaType = { kind: 'audio', ext: 'wav', contentType: 'audio/wav' };
const MP3: MediaType = { kind: 'audio', ext: 'mp3', contentType: 'audio/mpeg' };
const PAUSES_S = [0.8, 3, 5];
const LIMIT_S = 1.5;

type Trimmed = { longer_than_s: number; count: number; cut_s: number; cuts: { start_s: number; end_s: number }[] };

async function readMono(path: string): Promise<{ samples: Float32Array; rate: number }> {
  const { channels, sampleRate } = await readWav(path);
  return { samples: channels[0], rate: sampleRate };
}

describe('engine: pauses trimmed', function () {
  this.timeout(180_000);
  let dir: string;
  /** Where each speech block starts and ends in the recording (seconds). */
  const blocks: { start: number; end: number }[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'trim-pauses-'));
    const { samples, sampleRate } = await readSpeechSample();
    // The sample without its own quiet ends, so the pauses are the ones made here.
    let first = 0;
    let last = samples.length - 1;
    while (Math.abs(samples[first]) < 0.01) first++;
    while (Math.abs(samples[last]) < 0.01) last--;
    const speech = samples.subarray(first, last + 1);
    const parts: Float32Array[] = [];
    let at = 0;
    for (let k = 0; k <= PAUSES_S.length; k++) {
      blocks.push({ start: at / sampleRate, end: (at + speech.length) / sampleRate });
      parts.push(speech);
      at += speech.length;
      if (k < PAUSES_S.length) {
        const pause = new Float32Array(Math.round(PAUSES_S[k] * sampleRate));
        parts.push(pause);
        at += pause.length;
      }
    }
    const recording = new Float32Array(at);
    let offset = 0;
    for (const part of parts) {
      recording.set(part, offset);
      offset += part.length;
    }
    // Room noise under everything, 60 dB down.
    const noise = seededNoise(5);
    for (let i = 0; i < recording.length; i++) recording[i] += 0.001 * noise();
    await writeFile(join(dir, 'input.wav'), encodeWav({ sampleRate, channels: 1, bits: 16 }, [recording]));
    const chapters = blocks
      .map(
        (b, k) =>
          `[CHAPTER]\nTIMEBASE=1/1000\nSTART=${Math.round(b.start * 1000)}\nEND=${Math.round((blocks[k + 1]?.start ?? at / sampleRate) * 1000)}\ntitle=Part ${k + 1}`,
      )
      .join('\n');
    await writeFile(join(dir, 'chapters.txt'), `;FFMETADATA1\n${chapters}\n`);
    await ffmpeg([
      '-i',
      join(dir, 'input.wav'),
      '-i',
      join(dir, 'chapters.txt'),
      '-map_chapters',
      '1',
      '-c:a',
      'libmp3lame',
      '-b:a',
      '128k',
      join(dir, 'input.mp3'),
    ]);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const run = (input: MediaType, output: string, extra: Partial<ProcessSettings> = {}) =>
    processMedia(
      {
        inputPath: join(dir, `input.${input.ext}`),
        outputPath: join(dir, output),
        input,
        settings: { loudness_target: -16, true_peak: -1, enhancement_model: 'FINCH', ...extra },
      },
      { ffmpegPath: 'ffmpeg' },
    );

  it('shortens the pauses over 1.5 s to 1.5 s, leaves the speech as it was and says how much was cut', async () => {
    const trimmed = await run(WAV, 'trimmed.wav', { trim_pauses_s: LIMIT_S });
    await run(WAV, 'whole.wav');
    const report = trimmed.params.pauses_trimmed as Trimmed;
    assert.equal(report.longer_than_s, LIMIT_S);
    assert.equal(report.count, 2, JSON.stringify(report));
    const designedCut = PAUSES_S.reduce((sum, p) => sum + Math.max(0, p - LIMIT_S), 0);
    assert.ok(
      Math.abs(report.cut_s - designedCut) < 0.3,
      `cut ${report.cut_s} s, the pauses hold ${designedCut} s over the limit`,
    );

    const whole = await readMono(join(dir, 'whole.wav'));
    const cut = await readMono(join(dir, 'trimmed.wav'));
    assert.ok(
      Math.abs((whole.samples.length - cut.samples.length) / whole.rate - report.cut_s) < 0.002,
      'the file is shorter by what was cut',
    );
    // Each block of speech, where the cuts moved it: the same samples as without the trim.
    const moved = (t: number) =>
      t - report.cuts.filter((c) => c.end_s <= t).reduce((sum, c) => sum + c.end_s - c.start_s, 0);
    const newPauses: number[] = [];
    for (const [k, block] of blocks.entries()) {
      const from = Math.round(block.start * whole.rate);
      const to = Math.round(block.end * whole.rate);
      const shift = Math.round((block.start - moved(block.start)) * whole.rate);
      let signal = 0;
      let residual = 0;
      for (let i = from; i < to; i++) {
        signal += whole.samples[i] ** 2;
        residual += (whole.samples[i] - cut.samples[i - shift]) ** 2;
      }
      const db = 10 * Math.log10(residual / signal);
      assert.ok(db < -40, `speech block ${k + 1} changed: residual ${db.toFixed(1)} dB`);
      if (k > 0) newPauses.push(moved(block.start) - moved(blocks[k - 1].end));
    }
    assert.ok(Math.abs(newPauses[0] - PAUSES_S[0]) < 0.001, `the short pause kept: ${newPauses[0]}`);
    for (const pause of newPauses.slice(1))
      assert.ok(Math.abs(pause - LIMIT_S) < 0.25, `a long pause now ${pause.toFixed(3)} s`);
  });

  it("moves an MP3's chapters with the cuts", async () => {
    const result = await run(MP3, 'trimmed.mp3', { trim_pauses_s: LIMIT_S });
    const report = result.params.pauses_trimmed as Trimmed;
    const chapters = (await probe(join(dir, 'trimmed.mp3'))).chapters.map((c) => Number(c.start_time));
    const removedBefore = (t: number) =>
      report.cuts.filter((c) => c.end_s <= t).reduce((sum, c) => sum + c.end_s - c.start_s, 0);
    assert.equal(chapters.length, blocks.length);
    for (const [k, block] of blocks.entries())
      assert.ok(
        Math.abs(chapters[k] - (block.start - removedBefore(block.start))) < 0.03,
        `chapter ${k + 1} at ${chapters[k]}`,
      );
    assert.ok(chapters[3] < blocks[3].start - 4.5, 'the last chapter moved by both cuts');
  });

  it('is refused for loudness only, which measures no voice activity', async () => {
    await assert.rejects(
      run(WAV, 'refused.wav', { trim_pauses_s: 1, enhancement_model: 'LOUDNESS_ONLY' }),
      (err: Error) => {
        assert.match(err.message, /trim_pauses_s: .*LOUDNESS_ONLY runs no speech model/);
        return true;
      },
    );
  });
});
