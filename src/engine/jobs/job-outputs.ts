// A job's extra outputs (several-outputs) as the media keeps them: each one asked for made, and what the
// metadata echoes of each (docs/interface.md#several-outputs).
import type { AppliedOutput } from '../../contract/fields';
import { processedFileName } from '../storage/media-record';
import { ProcessingError, type ProcessResult, type ProducedOutput } from '../processors/processor';

/** The outputs the processor made, in the order asked; a processor that left one out fails the media. */
export function madeOutputs(asked: string[], result: ProcessResult): ProducedOutput[] {
  const made = new Map((result.outputs ?? []).map((output) => [output.name, output]));
  const missing = asked.filter((name) => !made.has(name));
  if (missing.length > 0)
    throw new ProcessingError(
      'PROCESSING_FAILED',
      `the processor made no output ${missing.map((name) => `"${name}"`).join(', ')} (it may not implement several-outputs)`,
    );
  return asked.map((name) => made.get(name)!);
}

/** `enhancement_params.outputs` once COMPLETED: each output's name, file name and what was applied. */
export function appliedOutputs(fileName: string, outputs: ProducedOutput[]): AppliedOutput[] {
  return outputs.map(({ name, output, params }) => ({
    name,
    file_name: processedFileName(fileName, name, output.ext),
    ...params,
  }));
}
