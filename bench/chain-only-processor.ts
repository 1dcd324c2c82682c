// A processor module for the speed benchmark: the speech-enhancement chain alone (no loudness stage),
// run by the engine's real worker pool, so the figure is the chain's own, split over the pool's threads.
import { enhanceWavFile } from '../src/enhance/chain';
import type { EnhancementModel } from '../src/enhance/chain-types';
import type { ProcessJob, ProcessResult, ThreadHelp } from '../src/engine/processors/processor';

export { runTask } from '../src/engine/processors/enhance-processor';

export async function processMedia(job: ProcessJob, _context: unknown, help?: ThreadHelp): Promise<ProcessResult> {
  const report = await enhanceWavFile(
    job.inputPath,
    job.outputPath,
    { model: job.settings.enhancement_model as EnhancementModel, level: job.settings.enhancement_level ?? 100 },
    help,
  );
  return { params: { threads: report.threads }, output: job.input };
}
