// Child process of client-transfer.bench: the floor for memory, a bare Node stream of the same file
// into a socket (no HTTP, no client), reporting how far its resident memory grew.
import { createReadStream } from 'node:fs';
import { connect } from 'node:net';
import { pipeline } from 'node:stream/promises';

async function main(): Promise<void> {
  const [port, input] = process.argv.slice(2);
  const baselineRss = process.memoryUsage.rss();
  let peakRss = baselineRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 20);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  await pipeline(createReadStream(input), socket);
  clearInterval(sampler);
  process.stdout.write(JSON.stringify({ rssGrowth: Math.max(peakRss, process.memoryUsage.rss()) - baselineRss }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
