// Child process of client-transfer.bench: the references. The same upload, wait and download as the
// client (after the same warm-up, when asked), done bare, with the multipart framing written by hand
// and fs streams at their default buffer sizes: through node:http (the floor), or through undici alone
// (the HTTP library the client uses, with nothing of the client around it). Reports its timings and
// how far its resident memory grew.
import { createReadStream, createWriteStream, promises as fsp } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Agent, request } from 'undici';
import { PATHS } from '../src/contract/endpoints';
import { PeakRss, WARM_UP_REQUESTS, type TransferTimes } from './peak-rss';

/** undici, loaded only for its own reference: the floor loads nothing but Node. */
interface Undici {
  request: typeof request;
  agent: Agent;
}

async function main(): Promise<void> {
  const [baseUrl, apiKey, input, output, via, start] = process.argv.slice(2);
  const undici: Undici | undefined =
    via === 'undici' ? await import('undici').then((u) => ({ request: u.request, agent: new u.Agent() })) : undefined;
  if (start === 'warm-up') for (let i = 0; i < WARM_UP_REQUESTS; i++) await askForNoSuchMedia(undici, baseUrl, apiKey);
  const rss = new PeakRss();
  const t0 = performance.now();
  const uid = await upload(undici, baseUrl, apiKey, input);
  const uploadMs = performance.now() - t0;
  const uploadRss = rss.endPhase();
  await waitUntilCompleted(undici, baseUrl, apiKey, uid);
  const t1 = performance.now();
  await download(undici, `${baseUrl}${PATHS.file(uid)}`, apiKey, output);
  const downloadMs = performance.now() - t1;
  const downloadRss = rss.endPhase();
  const times: TransferTimes = { uploadMs, downloadMs, uploadRss, downloadRss, rssGrowth: rss.stop() };
  await undici?.agent.close();
  process.stdout.write(JSON.stringify(times));
}

async function upload(undici: Undici | undefined, baseUrl: string, apiKey: string, input: string): Promise<string> {
  const boundary = 'bench-boundary-7f3a9c';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="input.wav"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const url = `${baseUrl}${PATHS.uploadMedia}`;
  const headers = {
    'x-api-key': apiKey,
    'content-type': `multipart/form-data; boundary=${boundary}`,
    'content-length': String(head.length + (await fsp.stat(input)).size + tail.length),
  };
  if (undici) {
    async function* body() {
      yield head;
      yield* createReadStream(input);
      yield tail;
    }
    const res = await undici.request(url, {
      dispatcher: undici.agent,
      method: 'POST',
      headers,
      body: Readable.from(body()),
    });
    const text = await res.body.text();
    if (res.statusCode !== 201) throw new Error(`upload: HTTP ${res.statusCode}: ${text}`);
    return (JSON.parse(text) as { uid: string }).uid;
  }
  const req = httpRequest(url, { method: 'POST', headers });
  const answer = new Promise<IncomingMessage>((resolve, reject) => req.once('response', resolve).once('error', reject));
  req.write(head);
  await pipeline(createReadStream(input), req, { end: false });
  req.end(tail);
  return ((await json(await answer)) as { uid: string }).uid;
}

async function download(undici: Undici | undefined, url: string, apiKey: string, output: string): Promise<void> {
  const res = undici
    ? await undici.request(url, { dispatcher: undici.agent, headers: { 'x-api-key': apiKey } })
    : await get(url, apiKey);
  const body = 'body' in res ? res.body : res;
  if (res.statusCode !== 200) throw new Error(`download: HTTP ${res.statusCode}`);
  await pipeline(body, createWriteStream(output));
}

/** A warm-up request: the status of a media that does not exist, a small 404 answer. */
async function askForNoSuchMedia(undici: Undici | undefined, baseUrl: string, apiKey: string): Promise<void> {
  const { status } = await statusOf(undici, baseUrl, apiKey, 'warm-up');
  if (status !== 404) throw new Error(`warm-up: HTTP ${status} where 404 was expected`);
}

async function waitUntilCompleted(
  undici: Undici | undefined,
  baseUrl: string,
  apiKey: string,
  uid: string,
): Promise<void> {
  for (;;) {
    const { status, text } = await statusOf(undici, baseUrl, apiKey, uid);
    if (status !== 200) throw new Error(`status: HTTP ${status}: ${text}`);
    const state = (JSON.parse(text) as { enhancement_status: string }).enhancement_status;
    if (state === 'COMPLETED') return;
    if (state === 'FAILED') throw new Error(`media ${uid} FAILED`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A status request through the same HTTP library as the transfers. */
async function statusOf(
  undici: Undici | undefined,
  baseUrl: string,
  apiKey: string,
  uid: string,
): Promise<{ status: number; text: string }> {
  const url = `${baseUrl}${PATHS.metadata(uid)}`;
  if (undici) {
    const res = await undici.request(url, { dispatcher: undici.agent, headers: { 'x-api-key': apiKey } });
    return { status: res.statusCode, text: await res.body.text() };
  }
  const res = await get(url, apiKey);
  let text = '';
  for await (const chunk of res) text += String(chunk);
  return { status: res.statusCode ?? 0, text };
}

function get(url: string, apiKey: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) =>
    httpRequest(url, { headers: { 'x-api-key': apiKey } }, resolve)
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
