// What the flow wrote down: one JSON line per output and per failure. A line cut short by a killed
// Node-RED is counted, not trusted.
import { promises as fsp } from 'node:fs';

export interface OutputRecord {
  media_uid: string;
  input: string;
  output: string;
  original: string;
  at: number;
}

export interface FailureRecord {
  input: string | null;
  media_uid: string | null;
  code: string | null;
  message: string;
  node?: string;
  at: number;
  /** Set when the input could not be moved to failed/. */
  moved?: string;
}

export interface Records<T> {
  records: T[];
  /** Lines that are not whole JSON objects. */
  broken: number;
}

export async function readRecords<T>(path: string): Promise<Records<T>> {
  const text = await fsp.readFile(path, 'utf8').catch(() => '');
  const records: T[] = [];
  let broken = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      records.push(JSON.parse(line) as T);
    } catch {
      broken++;
    }
  }
  return { records, broken };
}
