// Writes a WAV file block by block. The header reserves room for an RF64 ds64 chunk (as EBU Tech 3306
// recommends), so a file that grows past 4 GiB becomes RF64 in place when it is finished.
import { open, rm, type FileHandle } from 'node:fs/promises';
import { encodeFrames, type Planar } from './pcm-codec';
import type { WavFormat } from './wav-format';
import { writeFully } from './write-fully';

const JUNK_BYTES = 28; // the size of a ds64 chunk's body without a table
const MAX_RIFF_SIZE = 0xffffffff;

export interface WavWriterOptions {
  /** Largest RIFF size before the file becomes RF64; only tests lower it. */
  maxRiffBytes?: number;
}

export class WavWriter {
  private dataBytes = 0;
  private bytes = new Uint8Array(0);

  private constructor(
    private readonly file: FileHandle,
    private readonly path: string,
    readonly format: WavFormat,
    private readonly headerBytes: number,
    private readonly maxRiffBytes: number,
  ) {}

  static async create(path: string, format: WavFormat, options: WavWriterOptions = {}): Promise<WavWriter> {
    const header = buildHeader(format);
    const file = await open(path, 'w', 0o600); // a user's audio: for the engine's account only
    try {
      await writeFully(file, header, 0, header.length, 0);
    } catch (err) {
      await file.close();
      throw err;
    }
    return new WavWriter(file, path, format, header.length, options.maxRiffBytes ?? MAX_RIFF_SIZE);
  }

  /** Appends frames; `samples` is left holding what the file holds (see encodeFrames). */
  async write(samples: Planar, frames: number, dither: boolean): Promise<void> {
    const length = frames * this.format.blockAlign;
    if (this.bytes.length < length) this.bytes = new Uint8Array(new ArrayBuffer(length));
    encodeFrames(samples, frames, this.format, this.bytes, dither);
    await writeFully(this.file, this.bytes, 0, length, this.headerBytes + this.dataBytes);
    this.dataBytes += length;
  }

  /** Writes the final sizes into the header and closes the file. */
  async finish(): Promise<void> {
    try {
      const pad = this.dataBytes % 2;
      if (pad) await writeFully(this.file, new Uint8Array(1), 0, 1, this.headerBytes + this.dataBytes);
      const riffSize = this.headerBytes - 8 + this.dataBytes + pad;
      const sizes = Buffer.alloc(4);
      if (riffSize <= this.maxRiffBytes) {
        sizes.writeUInt32LE(riffSize);
        await writeFully(this.file, sizes, 0, 4, 4);
        sizes.writeUInt32LE(this.dataBytes);
        await writeFully(this.file, sizes, 0, 4, this.headerBytes - 4);
      } else {
        await writeFully(this.file, Buffer.from('RF64'), 0, 4, 0);
        sizes.writeUInt32LE(MAX_RIFF_SIZE);
        await writeFully(this.file, sizes, 0, 4, 4);
        await writeFully(this.file, sizes, 0, 4, this.headerBytes - 4);
        const ds64 = Buffer.alloc(8 + JUNK_BYTES);
        ds64.write('ds64', 0, 'latin1');
        ds64.writeUInt32LE(JUNK_BYTES, 4);
        ds64.writeBigUInt64LE(BigInt(riffSize), 8);
        ds64.writeBigUInt64LE(BigInt(this.dataBytes), 16);
        ds64.writeBigUInt64LE(BigInt(this.dataBytes / this.format.blockAlign), 24);
        await writeFully(this.file, ds64, 0, ds64.length, 12);
      }
    } finally {
      await this.file.close();
    }
  }

  /** Closes and removes the unfinished file. */
  async abort(): Promise<void> {
    await this.file.close().catch(() => undefined);
    await rm(this.path, { force: true });
  }
}

function buildHeader(format: WavFormat): Buffer {
  const extensible = format.channelMask !== 0;
  const tag = format.encoding === 'float' ? 3 : 1;
  const fmtBytes = extensible ? 40 : format.encoding === 'float' ? 18 : 16;
  const header = Buffer.alloc(12 + 8 + JUNK_BYTES + 8 + fmtBytes + 8);
  let at = 0;
  const text = (value: string) => (at = header.write(value, at, 'latin1') + at);
  const u32 = (value: number) => (at = header.writeUInt32LE(value, at));
  const u16 = (value: number) => (at = header.writeUInt16LE(value, at));
  text('RIFF');
  u32(0); // patched by finish()
  text('WAVE');
  text('JUNK');
  u32(JUNK_BYTES);
  at += JUNK_BYTES;
  text('fmt ');
  u32(fmtBytes);
  u16(extensible ? 0xfffe : tag);
  u16(format.channels);
  u32(format.sampleRate);
  u32(format.sampleRate * format.blockAlign);
  u16(format.blockAlign);
  u16(format.bitsPerSample);
  if (extensible) {
    u16(22);
    u16(format.bitsPerSample); // valid bits
    u32(format.channelMask);
    u16(tag); // sub-format GUID: the tag, then the fixed KSDATAFORMAT suffix
    header.write('000000001000800000aa00389b71', at, 'hex');
    at += 14;
  } else if (fmtBytes === 18) {
    u16(0);
  }
  text('data');
  u32(0); // patched by finish()
  return header;
}
