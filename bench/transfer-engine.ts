// Child process of client-transfer.bench: the local engine alone in a process of its own, so the
// transfers it serves do not share an event loop with what measures them. Its processor copies the
// file (the benchmark measures transfers, not enhancement), and finished media go soon after, so
// repeated 1 GiB rounds do not fill the disk. Prints its URL once it listens; stops on SIGTERM.
import { join } from 'node:path';
import { startEngine } from '../src/engine';

async function main(): Promise<void> {
  const [dataDir, maxUploadBytes] = process.argv.slice(2);
  const engine = await startEngine({
    port: 0,
    apiKeys: [process.env.BENCH_ENGINE_KEY ?? ''],
    dataDir,
    maxUploadBytes: Number(maxUploadBytes),
    processorModule: join(__dirname, '..', 'src', 'engine', 'processors', 'copy-processor.js'),
    limits: { uploadMedia: null, getMetadata: null, downloadFile: null },
    // Each round's media is removed once the next one has finished; the one being downloaded stays.
    retention: { maxTotalBytes: 1, graceMs: 5_000 },
  });
  process.stdout.write(`${JSON.stringify({ url: engine.url })}\n`);
  process.once('SIGTERM', () => {
    engine.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
