// Child process of client-transfer.bench: uploads a file through the client, waits, downloads it back,
// and reports its timings and how far its resident memory grew; with `warm-up`, after small requests first.
import { performance } from 'node:perf_hooks';
import { MediaEnhanceClient } from '../src';
import { MediaEnhanceError } from '../src/client/errors';
import { PeakRss, WARM_UP_REQUESTS, type TransferTimes } from './peak-rss';

async function main(): Promise<void> {
  const [baseUrl, apiKey, input, output, start] = process.argv.slice(2);
  // The engine of the benchmark sets no rate limits, so neither does its client (the warm-up is 500 status requests).
  const client = new MediaEnhanceClient({
    baseUrl,
    apiKey,
    limits: { uploadMedia: null, getMetadata: null, downloadFile: null },
    poll: { initialMs: [200, 300], longMs: [200, 300] },
  });
  if (start === 'warm-up')
    for (let i = 0; i < WARM_UP_REQUESTS; i++)
      await client.getMetadata('warm-up').catch((err: unknown) => {
        if (!(err instanceof MediaEnhanceError && err.status === 404)) throw err;
      });
  const rss = new PeakRss();
  const t0 = performance.now();
  const media = await client.uploadMedia({ file: input });
  const uploadMs = performance.now() - t0;
  const uploadRss = rss.endPhase();
  await client.waitForCompletion(media.uid);
  const t1 = performance.now();
  await client.downloadToFile(media.uid, output);
  const downloadMs = performance.now() - t1;
  const downloadRss = rss.endPhase();
  const times: TransferTimes = { uploadMs, downloadMs, uploadRss, downloadRss, rssGrowth: rss.stop() };
  await client.close();
  process.stdout.write(JSON.stringify(times));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
