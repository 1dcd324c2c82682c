// The default processor: the output is the input, unchanged, and the metadata says so.
import { promises as fsp } from 'node:fs';
import type { ProcessJob, ProcessResult } from './processor';

export async function processMedia(job: ProcessJob): Promise<ProcessResult> {
  await fsp.copyFile(job.inputPath, job.outputPath);
  return { params: { processing: 'none' }, output: job.input };
}
