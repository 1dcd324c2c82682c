// What a file is, from its first bytes (never from its name): the containers the service accepts.
import type { MediaFormat } from '../../audio/ffmpeg';

export interface MediaType {
  kind: 'audio' | 'video';
  /** Also the one demuxer ffmpeg may open the file with. */
  ext: MediaFormat;
  contentType: string;
}

/** Bytes needed to recognise every accepted container. */
export const SNIFF_BYTES = 16;

export function sniffMediaType(head: Buffer): MediaType | undefined {
  const ascii = (start: number, end: number) => head.subarray(start, end).toString('latin1');
  if ((ascii(0, 4) === 'RIFF' || ascii(0, 4) === 'RF64') && ascii(8, 12) === 'WAVE')
    return { kind: 'audio', ext: 'wav', contentType: 'audio/wav' };
  if (ascii(0, 4) === 'FORM' && (ascii(8, 12) === 'AIFF' || ascii(8, 12) === 'AIFC'))
    return { kind: 'audio', ext: 'aiff', contentType: 'audio/aiff' };
  if (ascii(0, 4) === 'fLaC') return { kind: 'audio', ext: 'flac', contentType: 'audio/flac' };
  if (ascii(0, 4) === 'OggS') return { kind: 'audio', ext: 'ogg', contentType: 'audio/ogg' };
  if (ascii(0, 3) === 'ID3') return { kind: 'audio', ext: 'mp3', contentType: 'audio/mpeg' };
  // An MPEG audio frame: 11 sync bits, a layer other than "reserved".
  if (head.length >= 2 && head[0] === 0xff && (head[1] & 0xe0) === 0xe0 && (head[1] & 0x06) !== 0)
    return { kind: 'audio', ext: 'mp3', contentType: 'audio/mpeg' };
  if (ascii(4, 8) === 'ftyp') {
    const brand = ascii(8, 12);
    if (brand === 'M4A ' || brand === 'M4B ') return { kind: 'audio', ext: 'm4a', contentType: 'audio/mp4' };
    if (brand === 'qt  ') return { kind: 'video', ext: 'mov', contentType: 'video/quicktime' };
    return { kind: 'video', ext: 'mp4', contentType: 'video/mp4' };
  }
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3)
    return { kind: 'video', ext: 'mkv', contentType: 'video/x-matroska' };
  return undefined;
}
