// A processor that changes nothing: the output is the input, and the metadata says so. Not the default
// (that is enhance-processor); an engine started with this `processorModule` only stores and serves media.
import { promises as fsp } from 'node:fs';
import type { ProcessJob, ProcessResult } from './processor';

export async function processMedia(job: ProcessJob): Promise<ProcessResult> {
  await fsp.copyFile(job.inputPath, job.outputPath);
  return { params: { processing: 'none' }, output: job.input };
}
