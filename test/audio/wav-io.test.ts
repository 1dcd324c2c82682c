// WAV reading and writing: every sample format the engine accepts, RF64, odd chunks, and damaged files.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allocatePlanar } from '../../src/audio/pcm-codec';
import { WavFormatError } from '../../src/audio/wav-format';
import { openWav } from '../../src/audio/wav-reader';
import { WavWriter } from '../../src/audio/wav-writer';
import { encodeWav, sine, type TestFormat } from '../fixtures/audio';
import { ffmpegLoudness } from '../fixtures/ffmpeg';

describe('WAV reading and writing', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'wav-io-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  async function readAll(path: string) {
    const source = await openWav(path);
    try {
      const channels: number[][] = Array.from({ length: source.layout.channels }, () => []);
      for await (const block of source.blocks()) {
        for (let c = 0; c < channels.length; c++) channels[c].push(...block.samples[c].subarray(0, block.frames));
      }
      return { layout: source.layout, channels };
    } finally {
      await source.close();
    }
  }

  const formats: Array<[string, TestFormat, number]> = [
    // name, format, largest rounding error expected
    ['8-bit PCM', { sampleRate: 8000, channels: 1, bits: 8 }, 1 / 128],
    ['16-bit PCM', { sampleRate: 44_100, channels: 2, bits: 16 }, 1 / 32768],
    ['24-bit PCM', { sampleRate: 48_000, channels: 3, bits: 24 }, 1 / 8388608],
    ['32-bit PCM', { sampleRate: 96_000, channels: 2, bits: 32 }, 1e-7],
    ['32-bit float', { sampleRate: 192_000, channels: 8, bits: 32, float: true }, 1e-7],
    ['64-bit float', { sampleRate: 22_050, channels: 1, bits: 64, float: true }, 1e-7],
    ['EXTENSIBLE 24-bit 5.1', { sampleRate: 48_000, channels: 6, bits: 24, channelMask: 0x3f }, 1 / 8388608],
    ['EXTENSIBLE float stereo', { sampleRate: 48_000, channels: 2, bits: 32, float: true, channelMask: 0x3 }, 1e-7],
    ['RF64 16-bit', { sampleRate: 48_000, channels: 2, bits: 16, rf64: true }, 1 / 32768],
  ];
  for (const [name, format, tolerance] of formats) {
    it(`reads ${name} (${format.channels} ch, ${format.sampleRate} Hz) sample for sample`, async () => {
      const planar = Array.from({ length: format.channels }, (_, c) =>
        sine(format.sampleRate, 250 * (c + 1), -1 - c, 0.3),
      );
      planar[0][0] = -1; // full scale negative: the sign extension's edge
      const path = join(dir, `${name.replace(/\W+/g, '-')}.wav`);
      await writeFile(path, encodeWav(format, planar));
      const { layout, channels } = await readAll(path);
      assert.equal(layout.sampleRate, format.sampleRate);
      assert.equal(layout.channels, format.channels);
      assert.equal(layout.frames, planar[0].length);
      for (let c = 0; c < format.channels; c++) {
        let worst = 0;
        for (let i = 0; i < planar[c].length; i++) worst = Math.max(worst, Math.abs(channels[c][i] - planar[c][i]));
        assert.ok(worst <= tolerance, `channel ${c}: off by ${worst}`);
      }
    });
  }

  it('writes what it reads: a 24-bit round trip is exact, and ffmpeg reads the file', async () => {
    const format = { sampleRate: 48_000, channels: 2, bits: 24 } as const;
    const input = join(dir, 'in.wav');
    await writeFile(input, encodeWav(format, [sine(48_000, 1000, -10, 2), sine(48_000, 500, -12, 2)]));
    const output = join(dir, 'out.wav');
    const source = await openWav(input);
    const writer = await WavWriter.create(output, source.layout);
    for await (const block of source.blocks()) await writer.write(block.samples, block.frames, false);
    await writer.finish();
    await source.close();
    const original = await readFile(input);
    const copy = await readFile(output);
    assert.deepEqual(copy.subarray(copy.length - 96_000 * 3), original.subarray(original.length - 96_000 * 3));
    const reference = await ffmpegLoudness(output);
    assert.ok(Number.isFinite(reference.integratedLufs));
  });

  it('turns a file into RF64 when its data passes the RIFF size limit, and ffmpeg reads it back', async () => {
    const path = join(dir, 'big.wav');
    const format = {
      sampleRate: 8000,
      channels: 1,
      bitsPerSample: 16,
      encoding: 'int',
      channelMask: 0,
      blockAlign: 2,
    } as const;
    const writer = await WavWriter.create(path, format, { maxRiffBytes: 20_000 });
    const block = allocatePlanar(1, 8000);
    block[0].set(sine(8000, 440, -6, 1));
    for (let i = 0; i < 3; i++) await writer.write(block, 8000, false);
    await writer.finish();
    const bytes = await readFile(path);
    assert.equal(bytes.toString('latin1', 0, 4), 'RF64');
    assert.equal(bytes.toString('latin1', 12, 16), 'ds64');
    const { layout } = await readAll(path);
    assert.equal(layout.frames, 24_000);
    const reference = await ffmpegLoudness(path);
    assert.ok(Math.abs(reference.truePeakDbtp - -6) < 0.2, `${reference.truePeakDbtp}`);
  });

  const damaged: Array<[string, (wav: Buffer) => Buffer | Promise<Buffer>, RegExp]> = [
    ['not a WAV at all', () => Buffer.from('ID3\x04 this is an mp3 maybe'), /not a WAV file/],
    ['cut inside the header', (wav) => wav.subarray(0, 30), /truncated WAV: the file ends inside/],
    [
      'cut inside the samples',
      (wav) => wav.subarray(0, wav.length - 1000),
      /truncated WAV: the data chunk declares \d+ bytes but the file holds \d+/,
    ],
    [
      'a chunk size past the end',
      (wav) => ((wav = Buffer.from(wav)), wav.writeUInt32LE(0x7fffffff, 16), wav),
      /truncated WAV: the "fmt " chunk runs past the end/,
    ],
    [
      'an unsupported sample format',
      (wav) => ((wav = Buffer.from(wav)), wav.writeUInt16LE(2, 20), wav),
      /unsupported WAV sample format: format tag 0x2/,
    ],
    [
      'zero channels',
      (wav) => ((wav = Buffer.from(wav)), wav.writeUInt16LE(0, 22), wav),
      /unsupported WAV: 0 channels/,
    ],
    [
      'a sample rate of 4 kHz',
      (wav) => ((wav = Buffer.from(wav)), wav.writeUInt32LE(4000, 24), wav),
      /sample rate 4000 Hz \(supported: 8000 to 192000 Hz\)/,
    ],
    [
      'a block align that does not match',
      (wav) => ((wav = Buffer.from(wav)), wav.writeUInt16LE(3, 32), wav),
      /block align 3 does not match 1 channels of 16 bits/,
    ],
  ];
  for (const [name, damage, message] of damaged) {
    it(`refuses ${name} with a clear error`, async () => {
      const wav = encodeWav({ sampleRate: 8000, channels: 1, bits: 16 }, [sine(8000, 440, -6, 0.5)]);
      const path = join(dir, `damaged-${name.replace(/\W+/g, '-')}.wav`);
      await writeFile(path, await damage(wav));
      await assert.rejects(readAll(path), (err: unknown) => err instanceof WavFormatError && message.test(err.message));
    });
  }

  it('reports a file that shrinks while it is read, instead of hanging', async () => {
    const path = join(dir, 'shrinking.wav');
    await writeFile(
      path,
      encodeWav({ sampleRate: 48_000, channels: 2, bits: 16 }, [sine(48_000, 440, -6, 3), sine(48_000, 440, -6, 3)]),
    );
    const source = await openWav(path);
    await truncate(path, (await stat(path)).size / 2);
    const reading = (async () => {
      for await (const block of source.blocks()) void block;
    })();
    await assert.rejects(reading, /truncated WAV: the file ended at frame \d+ of 144000/);
    await source.close();
  });
});
