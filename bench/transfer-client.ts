// Child process of client-transfer.bench: uploads a file through the client, waits, downloads it back,
// and reports its timings and how far its resident memory grew above where it started.
import { performance } from 'node:perf_hooks';
import { MediaEnhanceClient } from '../src';
import { PeakRss, type TransferTimes } from './peak-rss';

async function main(): Promise<void> {
  const [baseUrl, apiKey, input, output] = process.argv.slice(2);
  const client = new MediaEnhanceClient({ baseUrl, apiKey, poll: { initialMs: [200, 300], longMs: [200, 300] } });
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
