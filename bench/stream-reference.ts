// Child process of client-transfer.bench: the floor. The same upload, wait and download as the client,
// done by bare Node: node:http and fs streams at their default buffer sizes, the multipart framing
// written by hand, nothing else. Reports its timings and how far its resident memory grew.
import { createReadStream, createWriteStream, promises as fsp } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { PATHS } from '../src/contract/endpoints';
import { PeakRss, type TransferTimes } from './peak-rss';

async function main(): Promise<void> {
  const [baseUrl, apiKey, input, output] = process.argv.slice(2);
  const rss = new PeakRss();

  const t0 = performance.now();
  const uid = await upload(baseUrl, apiKey, input);
  const uploadMs = performance.now() - t0;
  const uploadRss = rss.endPhase();
  await waitUntilCompleted(baseUrl, apiKey, uid);
  const t1 = performance.now();
  const res = await send(`${baseUrl}${PATHS.file(uid)}`, apiKey);
  if (res.statusCode !== 200) throw new Error(`download: HTTP ${res.statusCode}`);
  await pipeline(res, createWriteStream(output));
  const downloadMs = performance.now() - t1;
  const downloadRss = rss.endPhase();

  const times: TransferTimes = { uploadMs, downloadMs, uploadRss, downloadRss, rssGrowth: rss.stop() };
  process.stdout.write(JSON.stringify(times));
}

async function upload(baseUrl: string, apiKey: string, input: string): Promise<string> {
  const boundary = 'bench-boundary-7f3a9c';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="input.wav"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const size = (await fsp.stat(input)).size;
  const req = request(`${baseUrl}${PATHS.uploadMedia}`, {
    method: 'POST',
    headers: {
      'x-api-key': apiKey,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': head.length + size + tail.length,
    },
  });
  const answer = new Promise<IncomingMessage>((resolve, reject) => req.once('response', resolve).once('error', reject));
  req.write(head);
  await pipeline(createReadStream(input), req, { end: false });
  req.end(tail);
  return ((await json(await answer)) as { uid: string }).uid;
}

async function waitUntilCompleted(baseUrl: string, apiKey: string, uid: string): Promise<void> {
  for (;;) {
    const { enhancement_status: state } = (await json(await send(`${baseUrl}${PATHS.metadata(uid)}`, apiKey))) as {
      enhancement_status: string;
    };
    if (state === 'COMPLETED') return;
    if (state === 'FAILED') throw new Error(`media ${uid} FAILED`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function send(url: string, apiKey: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) =>
    request(url, { headers: { 'x-api-key': apiKey } }, resolve)
      .once('error', reject)
      .end(),
  );
}

async function json(res: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of res) text += String(chunk);
  if ((res.statusCode ?? 0) >= 300) throw new Error(`HTTP ${res.statusCode}: ${text}`);
  return JSON.parse(text);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
