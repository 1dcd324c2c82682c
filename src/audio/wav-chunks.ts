// A WAV's chunks besides its audio (LIST/INFO tags, Broadcast WAV `bext`, `iXML`, cue points, ...),
// copied byte for byte from the input to the processed WAV, so that what a recorder or an editor wrote
// there survives. The processed file's own `fmt `, `data` and layout chunks are its own.
import { open } from 'node:fs/promises';
import { writeFully } from './write-fully';

/** Chunks that describe the audio itself or only reserve room: the output has its own. */
const AUDIO_CHUNKS = new Set(['fmt ', 'data', 'ds64', 'fact', 'JUNK', 'junk', 'PAD ', 'FLLR']);
/** At most this much of other chunks is carried over (tags and metadata are small; a stray huge chunk is not). */
const MAX_COPIED_BYTES = 16 << 20;

/** The ids of the chunks copied, in their order in the input. */
export async function copyWavChunks(inputPath: string, outputPath: string): Promise<string[]> {
  const chunks = await otherChunks(inputPath);
  if (chunks.length === 0) return [];
  const extra = Buffer.concat(chunks.map((chunk) => chunk.bytes));
  const output = await open(outputPath, 'r+');
  try {
    const head = Buffer.alloc(36);
    await output.read(head, 0, 36, 0);
    const { size } = await output.stat();
    const form = head.toString('latin1', 0, 4);
    if (form === 'RIFF') {
      const riffSize = size - 8 + extra.length;
      if (riffSize > 0xffffffff) return []; // no room in a RIFF size: the tags are left out rather than the audio damaged
      await writeFully(output, extra, 0, extra.length, size);
      const sizeField = Buffer.alloc(4);
      sizeField.writeUInt32LE(riffSize);
      await writeFully(output, sizeField, 0, 4, 4);
    } else if (form === 'RF64' && head.toString('latin1', 12, 16) === 'ds64') {
      await writeFully(output, extra, 0, extra.length, size);
      const sizeField = Buffer.alloc(8);
      sizeField.writeBigUInt64LE(BigInt(size - 8 + extra.length));
      await writeFully(output, sizeField, 0, 8, 20);
    } else {
      return [];
    }
    return chunks.map((chunk) => chunk.id);
  } finally {
    await output.close();
  }
}

async function otherChunks(path: string): Promise<{ id: string; bytes: Buffer }[]> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const head = Buffer.alloc(12);
    await file.read(head, 0, 12, 0);
    const form = head.toString('latin1', 0, 4);
    if ((form !== 'RIFF' && form !== 'RF64') || head.toString('latin1', 8, 12) !== 'WAVE') return [];
    const found: { id: string; bytes: Buffer }[] = [];
    let copied = 0;
    const chunkHead = Buffer.alloc(8);
    for (let at = 12; at + 8 <= size;) {
      await file.read(chunkHead, 0, 8, at);
      const id = chunkHead.toString('latin1', 0, 4);
      let length = chunkHead.readUInt32LE(4);
      // An RF64 data chunk's size lives in ds64; its 32-bit field says 0xFFFFFFFF. Nothing after it is read then.
      if (id === 'data' && form === 'RF64' && length === 0xffffffff) break;
      length = Math.min(length, size - at - 8);
      const padded = length + (length % 2);
      if (!AUDIO_CHUNKS.has(id) && copied + 8 + padded <= MAX_COPIED_BYTES) {
        const bytes = Buffer.alloc(8 + padded);
        await file.read(bytes, 0, 8 + length, at);
        found.push({ id, bytes });
        copied += bytes.length;
      }
      at += 8 + padded;
    }
    return found;
  } finally {
    await file.close();
  }
}
