// Child process of client-transfer.bench: uploads a file through the client, waits, downloads it back,
// and reports its timings and how far its resident memory grew above where it started.
import { performance } from 'node:perf_hooks';
import { MediaEnhanceClient } from '../src';

async function main(): Promise<void> {
  const [baseUrl, apiKey, input, output] = process.argv.slice(2);
  const client = new MediaEnhanceClient({ baseUrl, apiKey, poll: { initialMs: [200, 300], longMs: [200, 300] } });
  const baselineRss = process.memoryUsage.rss();
  let peakRss = baselineRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 20);

  const t0 = performance.now();
  const media = await client.uploadMedia({ file: input });
  const uploadMs = performance.now() - t0;
  await client.waitForCompletion(media.uid);
  const t1 = performance.now();
  const file = await client.downloadToFile(media.uid, output);
  const downloadMs = performance.now() - t1;

  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
  await client.close();
  process.stdout.write(
    JSON.stringify({ uid: media.uid, uploadMs, downloadMs, bytes: file.size, rssGrowth: peakRss - baselineRss }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
