// What a WAV file holds and where its samples are: the RIFF/RF64 header, read chunk by chunk so a long
// LIST or cover-art chunk before the samples costs no memory.
import type { FileHandle } from 'node:fs/promises';

export type SampleEncoding = 'int' | 'float';

export interface WavFormat {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  encoding: SampleEncoding;
  /** WAVE_FORMAT_EXTENSIBLE speaker mask; 0 when the file has none. */
  channelMask: number;
  /** Bytes per frame (one sample of every channel). */
  blockAlign: number;
}

export interface WavLayout extends WavFormat {
  /** Byte offset of the first sample. */
  dataOffset: number;
  /** Bytes of sample data (a whole number of frames). */
  dataBytes: number;
  frames: number;
}

/** A file that is not a WAV we can read, or a damaged one: the message says which and why. */
export class WavFormatError extends Error {
  readonly code = 'INVALID_WAV';
}

const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_IEEE_FLOAT = 0x0003;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
/** In a plain RIFF file, a data size of 0xFFFFFFFF is the writer saying "unknown, up to the end". */
const UNKNOWN_SIZE = 0xffffffff;
/** More chunks than this before the samples is not a WAV anyone wrote on purpose. */
const MAX_CHUNKS = 10_000;

export const SAMPLE_RATE_RANGE = { min: 8000, max: 192_000 } as const;
export const MAX_CHANNELS = 8;

export async function readWavLayout(file: FileHandle): Promise<WavLayout> {
  const fileSize = (await file.stat()).size;
  const head = await readAt(file, 0, 12, fileSize, 'the RIFF header');
  const riff = head.toString('latin1', 0, 4);
  if ((riff !== 'RIFF' && riff !== 'RF64') || head.toString('latin1', 8, 12) !== 'WAVE') {
    throw new WavFormatError('not a WAV file: it does not start with RIFF/RF64 ... WAVE');
  }
  let rf64DataBytes: number | undefined;
  let format: WavFormat | undefined;
  let offset = 12;
  for (let chunks = 0; chunks < MAX_CHUNKS; chunks++) {
    const header = await readAt(file, offset, 8, fileSize, `a chunk header at byte ${offset}`);
    const id = header.toString('latin1', 0, 4);
    const size = header.readUInt32LE(4);
    const body = offset + 8;
    if (id === 'ds64') {
      const ds64 = await readAt(file, body, 16, fileSize, 'the ds64 chunk');
      rf64DataBytes = Number(ds64.readBigUInt64LE(8));
    } else if (id === 'fmt ') {
      format = parseFmt(await readAt(file, body, Math.min(size, 40), fileSize, 'the fmt chunk'));
    } else if (id === 'data') {
      if (!format) throw new WavFormatError('damaged WAV: the data chunk comes before any fmt chunk');
      let declared = size;
      if (riff === 'RF64' && size === UNKNOWN_SIZE) {
        if (rf64DataBytes === undefined)
          throw new WavFormatError('damaged RF64 file: no ds64 chunk gives the data size');
        declared = rf64DataBytes;
      } else if (riff === 'RIFF' && size === UNKNOWN_SIZE) {
        declared = fileSize - body;
      }
      const available = fileSize - body;
      if (declared > available) {
        throw new WavFormatError(
          `truncated WAV: the data chunk declares ${declared} bytes but the file holds ${available} after the header`,
        );
      }
      const frames = Math.floor(declared / format.blockAlign);
      return { ...format, dataOffset: body, dataBytes: frames * format.blockAlign, frames };
    }
    offset = body + size + (size % 2); // chunks are padded to an even length
    if (offset > fileSize)
      throw new WavFormatError(
        `truncated WAV: the "${id.replace(/[^\x20-\x7e]/g, '?')}" chunk runs past the end of the file`,
      );
  }
  throw new WavFormatError(`damaged WAV: no data chunk among the first ${MAX_CHUNKS} chunks`);
}

function parseFmt(fmt: Buffer): WavFormat {
  if (fmt.length < 16)
    throw new WavFormatError(`damaged WAV: the fmt chunk is ${fmt.length} bytes, at least 16 are needed`);
  let tag = fmt.readUInt16LE(0);
  const channels = fmt.readUInt16LE(2);
  const sampleRate = fmt.readUInt32LE(4);
  const blockAlign = fmt.readUInt16LE(12);
  const bitsPerSample = fmt.readUInt16LE(14);
  let channelMask = 0;
  if (tag === WAVE_FORMAT_EXTENSIBLE) {
    if (fmt.length < 40) throw new WavFormatError('damaged WAV: WAVE_FORMAT_EXTENSIBLE needs a 40-byte fmt chunk');
    channelMask = fmt.readUInt32LE(20);
    tag = fmt.readUInt16LE(24); // the first two bytes of the sub-format GUID are the format tag
  }
  let encoding: SampleEncoding;
  if (tag === WAVE_FORMAT_PCM && [8, 16, 24, 32].includes(bitsPerSample)) encoding = 'int';
  else if (tag === WAVE_FORMAT_IEEE_FLOAT && (bitsPerSample === 32 || bitsPerSample === 64)) encoding = 'float';
  else
    throw new WavFormatError(
      `unsupported WAV sample format: format tag 0x${tag.toString(16)} with ${bitsPerSample} bits (supported: PCM 8/16/24/32-bit, IEEE float 32/64-bit)`,
    );
  if (channels < 1 || channels > MAX_CHANNELS)
    throw new WavFormatError(`unsupported WAV: ${channels} channels (supported: 1 to ${MAX_CHANNELS})`);
  if (sampleRate < SAMPLE_RATE_RANGE.min || sampleRate > SAMPLE_RATE_RANGE.max) {
    throw new WavFormatError(
      `unsupported WAV: sample rate ${sampleRate} Hz (supported: ${SAMPLE_RATE_RANGE.min} to ${SAMPLE_RATE_RANGE.max} Hz)`,
    );
  }
  if (blockAlign !== channels * (bitsPerSample / 8)) {
    throw new WavFormatError(
      `damaged WAV: block align ${blockAlign} does not match ${channels} channels of ${bitsPerSample} bits`,
    );
  }
  return { sampleRate, channels, bitsPerSample, encoding, channelMask, blockAlign };
}

async function readAt(
  file: FileHandle,
  position: number,
  length: number,
  fileSize: number,
  what: string,
): Promise<Buffer> {
  if (position + length > fileSize) throw new WavFormatError(`truncated WAV: the file ends inside ${what}`);
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  if (bytesRead < length) throw new WavFormatError(`truncated WAV: the file ends inside ${what}`);
  return buffer;
}
